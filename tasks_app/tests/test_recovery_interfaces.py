"""Retry, cancel and skip from the board (``hx-post``) and ``sf tasks retry|cancel|skip``."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from agents_app.models import AgentSession
from agents_app.tests.runtime_helpers import ScriptedModel
from conftest import grant
from tasks_app.models import Plan, TaskTransition
from tasks_app.tests.test_engine import repo, run_next, start, task_spec, writes
from tasks_app.tests.test_recovery import assert_clean
from tests.cli import run_sf

pytestmark = pytest.mark.django_db
__all__ = ["repo"]  # the fixture, shared with test_engine
HTMX = {"HTTP_HX_REQUEST": "true"}


def failed(repo: Path, *more: dict[str, object]) -> tuple[AgentSession, Plan]:
    """A session whose task ``hello`` failed on its only attempt."""
    session, plan = start(repo, task_spec(max_retries=0), *more)
    assert run_next(session, ScriptedModel(*writes("goodbye"))).task_status == "failed"
    return session, plan


def test_the_board_offers_recovery_and_retry_rerenders_it(
    repo: Path, logged_in_client: Client, user: User
) -> None:
    session, plan = failed(repo)
    grant(user, session.project, "operator")
    board = f"{reverse('task-board')}?session={session.pk}"
    html = logged_in_client.get(board).content.decode()
    retry_url = reverse("task-recover", args=[plan.tasks.get().pk, "retry"])
    assert f'hx-post="{retry_url}?session={session.pk}"' in html
    assert 'data-action="skip"' in html
    assert "csrfmiddlewaretoken" not in html.split('id="task-board"')[1], "no token in a partial"

    response = logged_in_client.post(f"{retry_url}?session={session.pk}", **HTMX)

    assert response.status_code == 200
    html = response.content.decode()
    assert html.lstrip().startswith('<div id="task-board">')
    assert 'data-status="todo"' in html
    assert 'data-action="retry"' not in html, "a todo task is not retried"
    assert plan.tasks.get().branch_attempt == 2
    assert TaskTransition.objects.filter(to_status="todo", actor_label="ada").exists()


def test_a_refused_action_shows_why_and_changes_nothing(
    repo: Path, logged_in_client: Client, user: User
) -> None:
    session, plan = start(repo, task_spec())
    grant(user, session.project, "operator")
    task = plan.tasks.get()
    before = TaskTransition.objects.count()
    url = reverse("task-recover", args=[task.pk, "retry"])
    response = logged_in_client.post(f"{url}?session={session.pk}", **HTMX)
    assert response.status_code == 200
    assert "only a task that is failed can be retried" in response.content.decode()
    assert TaskTransition.objects.count() == before
    assert (
        logged_in_client.post(reverse("task-recover", args=[task.pk, "explode"])).status_code == 404
    )


def test_cli_retry(repo: Path) -> None:
    session, plan = failed(repo)
    code, out, _ = run_sf("tasks", "retry", "hello", "--session", str(session.pk))
    assert code == 0
    assert out.startswith("hello: todo (retry asked by cli)")
    assert plan.tasks.get().branch_attempt == 2
    assert_clean(repo)


def test_cli_cancel(repo: Path) -> None:
    session, plan = failed(repo)
    code, out, _ = run_sf(
        "tasks", "cancel", "hello", "--session", str(session.pk), "--reason", "obsolete"
    )
    assert (code, out) == (0, "hello: cancelled (cancelled by cli: obsolete)\n")
    plan.refresh_from_db()
    assert plan.status == "cancelled"
    assert_clean(repo)


def test_cli_skip(repo: Path) -> None:
    session, plan = failed(repo, task_spec("after", depends_on=["hello"]))
    code, out, _ = run_sf("tasks", "skip", "hello", "--session", str(session.pk))
    assert (code, out) == (0, "hello: skipped (skipped by cli)\n")
    assert plan.tasks.get(key="after").status == "todo"
    assert_clean(repo)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["retry", "nope"], "error: no task 'nope' in an accepted plan of session"),
        (["skip", "hello", "--user", "nobody"], "error: no user named 'nobody'"),
        (["cancel", "hello"], None),  # the session below is replaced by one that does not exist
    ],
)
def test_cli_bad_input_exits_2_and_writes_nothing(
    repo: Path, args: list[str], message: str | None
) -> None:
    session, _ = failed(repo)
    before = TaskTransition.objects.count()
    target = str(session.pk if message else session.pk + 1000)
    code, out, err = run_sf("tasks", *args, "--session", target)
    assert code == 2
    assert out == ""
    assert len(err.splitlines()) == 1
    assert err.startswith(message or "error: no session with id")
    assert TaskTransition.objects.count() == before


def test_cli_retry_of_a_task_that_did_not_fail_exits_2(repo: Path) -> None:
    session, _ = start(repo, task_spec())
    code, _, err = run_sf("tasks", "retry", "hello", "--session", str(session.pk))
    assert code == 2
    assert err == "error: task hello is todo; only a task that is failed can be retried\n"
