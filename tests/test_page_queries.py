"""Pages read what they show in a bounded number of queries: the dashboard, a session's
board and a unit's page take no more queries with a board of 120 tasks on three pages
and a unit with a 60-event trace than the bounds below, which are what they take for
one task; a query per row, per event or per unit would break them at once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from agents_app.models import TraceEvent, TraceKind
from sf_core.actors import Actor
from tasks_app.models import DiffComment, Unit
from tasks_app.schemas import plan_spec_parse
from tasks_app.services import plan_accept, plan_create
from tests.access_world import task_in, world_make

pytestmark = pytest.mark.django_db

BOUNDS = {"dashboard": 30, "board": 25, "unit": 25}
# A later attempt's unit page, with comments carried from the attempt before: 14 (session,
# user, unit, role, attempts, trace times, costs, merge, the model wait, set-up, trace,
# carried comments, the sending back, the follow-ups).
UNIT_PAGE = 14


def grow(session: Any, unit: Unit, tasks: int, events: int) -> None:
    """More tasks on the session's board, more events in the unit's trace."""
    specs = [
        {"key": f"t{n}", "title": f"T {n}", "acceptance_criteria": ["R1"], "verify": ["true"]}
        for n in range(tasks)
    ]
    spec = {"summary": "more", "tasks": specs}
    plan = plan_create(session=session, spec=plan_spec_parse(spec), source="api")
    plan_accept(plan=plan, actor=Actor.system("t"), start=False)
    start = unit.trace.count()
    now = timezone.now()
    TraceEvent.objects.bulk_create(
        TraceEvent(
            session=session,
            unit=unit,
            seq=start + n,
            kind=TraceKind.TOOL_CALL,
            name="read_file",
            started_at=now,
            finished_at=now,
        )
        for n in range(events)
    )


def test_pages_take_a_bounded_number_of_queries(
    tmp_path: Path, django_assert_max_num_queries: Any
) -> None:
    world = world_make(tmp_path, "admin")
    session, plan = task_in(world, "failed")
    unit = Unit.objects.get(task__plan=plan)
    client = Client()
    client.force_login(world.bob)
    pages = {
        "dashboard": "/",
        "board": f"/tasks/?session={session.pk}",
        "unit": f"/units/{unit.pk}/",
    }
    for size in ("one task", "120 tasks"):
        if size == "120 tasks":
            grow(session, unit, tasks=119, events=60)
        for name, path in pages.items():
            with django_assert_max_num_queries(BOUNDS[name]):
                assert client.get(path).status_code == 200, (size, name)


def test_a_later_attempts_page_reads_the_role_and_the_attempts_once(
    tmp_path: Path, django_assert_max_num_queries: Any
) -> None:
    """The unit page of a second attempt shows the comments carried from the first:
    the person's role (for the page and for its review buttons) is one query, and the
    attempt before is found among the task's attempts the page reads anyway."""
    world = world_make(tmp_path, "admin")
    _, plan = task_in(world, "failed")
    first = Unit.objects.get(task__plan=plan)
    second = Unit.objects.create(task=first.task, attempt=2, started_at=timezone.now())
    DiffComment.objects.create(unit=first, path="a.py", line=1, text="Name it plainly.")
    client = Client()
    client.force_login(world.bob)
    client.get(f"/units/{second.pk}/")  # the session, once per process caches
    with django_assert_max_num_queries(UNIT_PAGE) as queries:
        page = client.get(f"/units/{second.pk}/")
    assert page.status_code == 200
    assert "Name it plainly." in page.content.decode()
    sql = [query["sql"] for query in queries.captured_queries]
    assert sum('FROM "agents_app_projectmembership"' in each for each in sql) == 1, sql
    assert sum('FROM "tasks_app_unit"' in each for each in sql) == 2, sql
