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
from tasks_app.models import Unit
from tasks_app.schemas import plan_spec_parse
from tasks_app.services import plan_accept, plan_create
from tests.access_world import task_in, world_make

pytestmark = pytest.mark.django_db

BOUNDS = {"dashboard": 30, "board": 25, "unit": 25}


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
