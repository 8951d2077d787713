"""The board's partial rendered once per ``SF_PAGE_CACHE`` for everyone who may view the
session (sf_core/microcache.py): shared, never past a role check, fresh after its
interval, and never the answer to a person's own action."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from agents_app.models import AgentSession, Role
from conftest import grant
from sf_core.actors import Actor
from sf_core.microcache import PAGES
from tasks_app.models import Task
from tasks_app.services import plan_accept
from tasks_app.tests.conftest import make_plan, task_data

pytestmark = pytest.mark.django_db
HTMX: dict[str, Any] = {"HTTP_HX_REQUEST": "true"}


class Clock:
    """The cache's clock, moved by the test: nothing here depends on the machine's speed."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(autouse=True)
def clock(settings: object) -> Iterator[Clock]:
    settings.SF_PAGE_CACHE = timedelta(seconds=1)  # type: ignore[attr-defined]
    PAGES.clear()
    PAGES.clock = clock = Clock()
    yield clock
    PAGES.clock = time.monotonic
    PAGES.clear()


@pytest.fixture
def board(plan_session: AgentSession) -> str:
    plan = make_plan(plan_session, *(task_data(f"t{index}") for index in range(30)))
    plan_accept(plan=plan, actor=Actor.system("t"), start=False)
    Task.objects.filter(plan=plan, key="t3").update(status="failed")
    return f"/tasks/?session={plan_session.pk}"


def client_of(django_user_model: type[User], name: str) -> tuple[User, Client]:
    person = django_user_model.objects.create_user(name, password=None)
    client = Client()
    client.force_login(person)
    return person, client


def counted(client: Client, path: str, **extra: Any) -> tuple[str, int]:
    with CaptureQueriesContext(connection) as queries:
        response = client.get(path, **extra)
    assert response.status_code == 200, response.status_code
    return response.content.decode(), len(queries)


def test_a_second_viewer_within_the_interval_gets_the_same_render_without_its_queries(
    logged_in_client: Client,
    board: str,
    plan_session: AgentSession,
    django_user_model: type[User],
) -> None:
    _, first_queries = counted(logged_in_client, board)
    viewer, client = client_of(django_user_model, "viewer")
    grant(viewer, plan_session.project, Role.VIEWER)
    second, second_queries = counted(client, board)
    assert 'data-task="t3" data-status="failed"' in second
    assert second_queries < first_queries - 5, (first_queries, second_queries)
    partial, _ = counted(client, board, **HTMX)
    assert partial.strip().startswith('<div id="task-board">')
    assert partial.strip() in second  # the page holds the very same partial
    assert PAGES.hits >= 2


def test_no_role_is_refused_though_the_board_is_kept(
    logged_in_client: Client,
    board: str,
    plan_session: AgentSession,
    django_user_model: type[User],
) -> None:
    counted(logged_in_client, board)  # kept now
    stranger, client = client_of(django_user_model, "stranger")
    grant(stranger, plan_session.project, None)
    assert client.get(board).status_code in (403, 404)
    assert client.get(board, **HTMX).status_code in (403, 404)


def test_a_change_shows_once_the_interval_is_over_and_a_persons_action_at_once(
    logged_in_client: Client, board: str, plan_session: AgentSession, clock: Clock
) -> None:
    counted(logged_in_client, board)
    failed = Task.objects.get(plan__session=plan_session, key="t3")
    answer = logged_in_client.post(
        f"/tasks/{failed.pk}/retry?session={plan_session.pk}", **HTMX
    ).content.decode()
    assert 'data-task="t3" data-status="todo"' in answer  # rendered after the action
    kept, _ = counted(logged_in_client, board)
    assert 'data-task="t3" data-status="failed"' in kept  # within the interval
    clock.now += 1.01
    fresh, _ = counted(logged_in_client, board)
    assert 'data-task="t3" data-status="todo"' in fresh


def test_the_board_of_every_session_is_each_persons_own(
    logged_in_client: Client, board: str, django_user_model: type[User]
) -> None:
    mine, _ = counted(logged_in_client, "/tasks/")
    assert 'data-task="t3"' in mine
    _, client = client_of(django_user_model, "nobody")
    theirs, _ = counted(client, "/tasks/")
    assert 'data-task="t3"' not in theirs
