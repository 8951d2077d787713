"""The dashboard's session table: outcome, progress, start and finish, filters, pages."""

from __future__ import annotations

import importlib
from typing import Any

import pytest
from django.apps import apps
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from agents_app.models import AgentSession, ModeTransition, Project
from agents_app.services import (
    project_create,
    session_finish,
    session_reopen,
    session_set_paused,
)
from conftest import grant, make_git_repo
from dashboard_app.sessions import PAGE_SIZE
from dashboard_app.tests.sessions_data import new_session, rows, work
from sf_core.actors import Actor
from tests.upgrade.migrations import agents_app_before

pytestmark = pytest.mark.django_db

SF = Actor.system("test")


def get(client: Client, **params: Any) -> str:
    response = client.get(reverse("dashboard"), params)
    assert response.status_code == 200
    return response.content.decode()


def finish(session: AgentSession, status: str) -> None:
    assert session_finish(session=session, status=status, reason="plan ended", actor=SF)


def test_each_row_shows_outcome_progress_times_and_cost(
    logged_in_client: Client, project: Project
) -> None:
    running = new_session(project, "running", cost_spent="1.2500")
    work(running, "done", "skipped", "review", "todo")
    work(running, "todo", "todo", plan_status="superseded")  # not the session's work
    done = new_session(project, "done")
    work(done, "done", "done", plan_status="done")
    finish(done, "completed")
    failed = new_session(project, "failed")
    work(failed, "done", "failed", plan_status="failed")
    finish(failed, "failed")
    cancelled = new_session(project, "cancelled")
    work(cancelled, "cancelled", plan_status="cancelled")
    finish(cancelled, "completed")
    paused = new_session(project, "paused")
    session_set_paused(session=paused, paused=True, reason="tea", actor=SF)

    table = rows(get(logged_in_client))

    outcome, row = table[running.pk]
    assert outcome == "active"
    assert 'data-progress="2/4"' in row
    assert "2/4 done" in row
    assert 'data-skipped="1"' in row
    assert "(1 skipped)" in row
    assert 'data-in-review="1"' in row
    assert "$1.2500" in row
    assert f'datetime="{running.created_at.isoformat()}"' in row
    assert "data-finished" not in row
    outcome, row = table[done.pk]
    done.refresh_from_db()
    assert outcome == "completed"
    assert 'data-progress="2/2"' in row
    assert done.finished_at is not None
    assert f'datetime="{done.finished_at.isoformat()}" data-finished' in row
    assert table[failed.pk][0] == "failed"
    assert 'data-progress="1/2"' in table[failed.pk][1]
    assert table[cancelled.pk][0] == "cancelled"
    assert "data-finished" in table[cancelled.pk][1]
    assert table[paused.pk][0] == "paused"
    assert "no tasks" in table[paused.pk][1]


def test_finished_at_is_set_when_a_session_finishes_and_cleared_when_it_reopens(
    agent_session: AgentSession,
) -> None:
    assert agent_session.finished_at is None
    finish(agent_session, "failed")
    agent_session.refresh_from_db()
    assert agent_session.finished_at is not None
    assert session_reopen(session=agent_session, reason="retry", actor=SF)
    agent_session.refresh_from_db()
    assert agent_session.finished_at is None


def test_the_migration_backfills_finished_at_from_the_transition_log(
    project: Project,
) -> None:
    finished, active = new_session(project, "f"), new_session(project, "a")
    finish(finished, "completed")
    AgentSession.objects.update(finished_at=None)
    logged = ModeTransition.objects.get(session=finished, reason__startswith="session completed:")

    # As it ran on upgraded databases (agents_app's one migration now replaces it).
    migration = importlib.import_module(
        f"{agents_app_before.__name__}.0008_agentsession_finished_at"
    )
    migration.backfill_finished_at(apps, None)

    finished.refresh_from_db()
    active.refresh_from_db()
    assert finished.finished_at == logged.applied_at
    assert active.finished_at is None


def test_filters_by_project_outcome_and_title(
    logged_in_client: Client, project: Project, tmp_path: Any
) -> None:
    other = project_create(name="other", repo_path=str(make_git_repo(tmp_path / "other")))
    grant(User.objects.get(username="ada"), other, "viewer")
    alpha = new_session(project, "Alpha refactor")
    beta = new_session(project, "beta cleanup")
    gamma = new_session(other, "gamma alpha")
    finish(beta, "completed")
    untitled = new_session(other)

    assert set(rows(get(logged_in_client, project=other.pk))) == {gamma.pk, untitled.pk}
    assert set(rows(get(logged_in_client, outcome="completed"))) == {beta.pk}
    assert set(rows(get(logged_in_client, q="ALPHA"))) == {alpha.pk, gamma.pk}
    assert set(rows(get(logged_in_client, q="alpha", project=project.pk))) == {alpha.pk}
    assert set(rows(get(logged_in_client, q=f"Session {untitled.pk}"))) == {untitled.pk}
    html = get(logged_in_client, q="alpha")
    assert 'data-matching="2" data-total="4"' in html
    assert "of 2 matching sessions (4 in all)" in html
    assert 'ws-connect="/ws/sessions/?q=alpha"' in html
    assert 'value="alpha"' in html  # the form keeps what was asked
    assert "No session matches these filters." in get(logged_in_client, q="nothing like it")


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"project": "abc"}, "There is no project abc. Ignored."),
        ({"project": "999999"}, "There is no project 999999. Ignored."),
        ({"project": "9" * 30}, f"There is no project {'9' * 30}. Ignored."),
        ({"outcome": "exploded"}, "Unknown outcome exploded; accepted: active, paused,"),
        ({"page": "two"}, "The page must be a number. Ignored."),
        ({"page": "0"}, "The page must be 1 or more. Ignored."),
        ({"page": "7"}, "There is no page 7; showing page 1."),
        ({"q": "x" * 201}, "The search is too long (at most 200). Ignored."),
        ({"q": "9" * 40}, None),  # a number no id can reach: just no match
    ],
)
def test_a_bad_filter_is_named_and_ignored_not_a_500(
    logged_in_client: Client, agent_session: AgentSession, params: dict[str, str], message: str
) -> None:
    html = get(logged_in_client, **params)
    if message is None:
        assert "data-filter-error" not in html
        return
    assert "data-filter-error" in html
    assert message in html
    assert set(rows(html)) == {agent_session.pk}


def test_a_bad_filter_leaves_the_good_ones_applied(
    logged_in_client: Client, project: Project
) -> None:
    wanted, _ = new_session(project, "wanted"), new_session(project, "other")
    html = get(logged_in_client, q="wanted", outcome="exploded")
    assert "Unknown outcome exploded" in html
    assert set(rows(html)) == {wanted.pk}
    assert 'ws-connect="/ws/sessions/?q=wanted"' in html  # the bad value is not carried on


def test_sessions_come_in_pages_with_showing_n_of_m(
    logged_in_client: Client, project: Project
) -> None:
    sessions = [new_session(project, f"s{i}") for i in range(PAGE_SIZE + 3)]
    first = get(logged_in_client)
    assert len(rows(first)) == PAGE_SIZE
    assert f"Showing 1\N{EN DASH}{PAGE_SIZE} of {PAGE_SIZE + 3} sessions" in first
    assert 'href="?page=2#sessions" rel="next"' in first
    second = get(logged_in_client, page=2, q="s")
    assert set(rows(second)) == {s.pk for s in sessions[:3]}  # the oldest
    assert (
        f"Showing {PAGE_SIZE + 1}\N{EN DASH}{PAGE_SIZE + 3} of {PAGE_SIZE + 3} matching" in second
    )
    assert 'href="?q=s&amp;page=1#sessions" rel="prev"' in second
    assert 'ws-connect="/ws/sessions/?q=s&amp;page=2"' in second


def test_the_number_of_queries_does_not_grow_with_the_rows(
    logged_in_client: Client, project: Project
) -> None:
    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            get(logged_in_client)
        return len(captured)

    first = new_session(project, "one")
    work(first, "done", "review")
    one = queries()
    for i in range(4):
        session = new_session(project, f"more {i}")
        work(session, "done", "skipped", "review")
        finish(session, "completed")
    assert len(rows(get(logged_in_client))) == 5
    assert queries() == one
