"""The task board in pages: rows of one page, figures over every task, the page kept by
the links, the buttons and the live socket; the branch heads the conflict check reads."""

from __future__ import annotations

import subprocess
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from agents_app.models import AgentSession
from conftest import make_git_repo, websocket
from sf_core.actors import Actor
from tasks_app.board import task_board
from tasks_app.merge_conflicts import branch_heads, ordered_pairs
from tasks_app.models import Plan, Task, TaskRuntime, Unit
from tasks_app.selectors import rows_touched
from tasks_app.services import plan_accept
from tasks_app.tests.conftest import make_plan, task_data

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def big_session(plan_session: AgentSession) -> AgentSession:
    """120 tasks, t0…t119, accepted but not started; t10 and t60 failed, t61 done."""
    plan = make_plan(plan_session, *(task_data(f"t{index}") for index in range(120)))
    plan_accept(plan=plan, actor=Actor.system("t"), start=False)
    Task.objects.filter(plan=plan, key__in=["t10", "t60"]).update(status="failed")
    Task.objects.filter(plan=plan, key="t61").update(status="done")
    return plan_session


def keys(board_rows: list) -> list[str]:  # type: ignore[type-arg]
    return [row.task.key for row in board_rows]


def test_a_page_holds_its_rows_and_the_counts_cover_every_page(
    big_session: AgentSession,
) -> None:
    board = task_board(session_id=big_session.pk, page=2)
    assert keys(board.rows) == [f"t{index}" for index in range(50, 100)]
    assert board.counts == {"todo": 117, "done": 1, "failed": 2}
    assert board.total == 120
    assert board.page is not None
    assert (board.page.number, board.page.paginator.num_pages) == (2, 3)
    assert task_board(session_id=big_session.pk, page=99).page.number == 3  # type: ignore[union-attr]
    assert task_board(session_id=big_session.pk, page="x").page.number == 1  # type: ignore[union-attr]


def test_a_status_filter_pages_what_it_lets_through(big_session: AgentSession) -> None:
    board = task_board(session_id=big_session.pk, statuses=["failed"], page=1)
    assert keys(board.rows) == ["t10", "t60"]
    assert board.total == 2
    assert board.counts["todo"] == 117  # the counts stay over every task


def test_without_a_page_every_row_is_there(big_session: AgentSession) -> None:
    board = task_board(session_id=big_session.pk)
    assert len(board.rows) == 120
    assert board.page is None


def test_the_page_its_buttons_and_its_socket_stay_on_page_two(
    logged_in_client: Client, big_session: AgentSession
) -> None:
    html = logged_in_client.get(f"/tasks/?session={big_session.pk}&page=2").content.decode()
    assert f'ws-connect="/ws/tasks/?session={big_session.pk}&amp;page=2"' in html
    assert "page 2 of 3" in html
    assert f'href="?session={big_session.pk}&amp;page=3" rel="next"' in html
    failed = Task.objects.get(plan__session=big_session, key="t60")
    assert f'hx-post="/tasks/{failed.pk}/retry?session={big_session.pk}&amp;page=2"' in html
    answer = logged_in_client.post(
        f"/tasks/{failed.pk}/retry?session={big_session.pk}&page=2", **HTMX
    ).content.decode()
    assert 'data-task="t60" data-status="todo"' in answer
    assert 'data-task="t0"' not in answer  # still page 2
    assert 'data-page="2"' in answer


@pytest.mark.asyncio
@pytest.mark.django_db(transaction=True)
async def test_the_live_board_renders_the_page_its_socket_names(
    session_cookie: bytes, big_session: AgentSession
) -> None:
    communicator = websocket(f"/ws/tasks/?session={big_session.pk}&page=3", cookie=session_cookie)
    connected, _ = await communicator.connect()
    try:
        assert connected
        html = await communicator.receive_from(timeout=5)
        assert 'data-task="t119"' in html
        assert 'data-task="t0"' not in html
        assert 'data-page="3"' in html
    finally:
        await communicator.disconnect()


def test_branch_heads_follow_new_and_moved_branches(tmp_path: Path) -> None:
    repo = make_git_repo(tmp_path / "repo")

    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True)
        return done.stdout.strip()

    git("branch", "sf/p1/a/1")
    time.sleep(0.15)  # settled: kept
    assert set(branch_heads(str(repo))) == {"main", "sf/p1/a/1"}
    git("branch", "sf/p1/b/1")
    assert set(branch_heads(str(repo))) == {"main", "sf/p1/a/1", "sf/p1/b/1"}
    time.sleep(0.15)
    assert branch_heads(str(repo))["sf/p1/a/1"] == git("rev-parse", "main")
    git("switch", "-q", "sf/p1/a/1")
    git("commit", "-q", "--allow-empty", "-m", "moved")
    assert branch_heads(str(repo))["sf/p1/a/1"] == git("rev-parse", "HEAD")


def test_only_the_asked_pairs_are_ordered() -> None:
    depends_on = {3: [2], 2: [1], 5: [4]}
    assert ordered_pairs(depends_on) == {(2, 3), (1, 3), (1, 2), (4, 5)}
    assert ordered_pairs(depends_on, among=[1, 3, 5]) == {(1, 3)}


def test_a_change_touches_its_row_its_dependents_and_the_rows_whose_flags_it_moves(
    diamond_plan: Plan, django_assert_num_queries: Any
) -> None:
    """a → (b, c) → d; c and d claim the same file."""
    plan_accept(plan=diamond_plan, actor=Actor.system("t"), start=False)
    ids = dict(diamond_plan.tasks.values_list("key", "pk"))
    shown = frozenset(ids.values())
    with django_assert_num_queries(1):
        assert rows_touched(ids["a"], shown) == [ids["a"], ids["b"], ids["c"]]
    assert rows_touched(ids["a"], frozenset({ids["a"], ids["d"]})) == [ids["a"]], "page only"
    assert rows_touched(ids["b"], shown) == [ids["b"], ids["d"]]
    # A claim of a's own: the open tasks with a claim (their overlap flags may move).
    Task.objects.filter(pk=ids["a"]).update(intent_claim=["src/shared.py"])
    assert rows_touched(ids["a"], shown) == [ids[key] for key in "abcd"]
    Task.objects.filter(pk=ids["d"]).update(status="done")  # closed: flags no longer
    assert rows_touched(ids["a"], shown) == [ids[key] for key in "abc"]
    # A task waiting to merge may gain or lose a conflict with any change.
    Task.objects.filter(pk=ids["d"]).update(status="review")
    assert rows_touched(ids["b"], shown) == [ids["b"], ids["d"]]
    assert rows_touched(ids["c"], frozenset({ids["c"], ids["b"]})) == [ids["c"]]
    Task.objects.filter(pk=ids["b"]).update(status="review")
    assert rows_touched(ids["c"], frozenset({ids["c"], ids["b"]})) == [ids["c"], ids["b"]]


def test_the_runtime_column_says_how_long_the_unit_runs_apart_from_the_heartbeat(
    logged_in_client: Client, plan_session: AgentSession
) -> None:
    plan = make_plan(plan_session, task_data("api"))
    plan_accept(plan=plan, actor=Actor.system("t"), start=False)
    task = Task.objects.get(plan=plan)
    Task.objects.filter(pk=task.pk).update(status="in_progress")
    now = timezone.now()
    TaskRuntime.objects.update_or_create(
        task=task, defaults={"worker": "w1", "last_heartbeat_at": now - timedelta(seconds=3)}
    )
    Unit.objects.create(task=task, attempt=1, started_at=now - timedelta(minutes=7))
    html = logged_in_client.get(f"/tasks/?session={plan_session.pk}").content.decode()
    assert "<span data-run-time>running 7\xa0minutes</span>" in html
    assert "heartbeat 3." in html  # the worker's last beat, said as such


@pytest.mark.parametrize(
    ("status", "asked", "shown"),
    [
        ("in_progress", "after_step", True),
        ("in_progress", "cancel", True),
        ("verifying", "cancel", True),
        ("verifying", "after_step", False),  # its agent is done: it goes on to review
        ("paused", "after_step", False),  # honoured: the unit ended, its row not yet gone
        ("cancelled", "cancel", False),
    ],
)
def test_a_stop_shows_on_the_board_only_while_it_is_still_to_come(
    logged_in_client: Client, plan_session: AgentSession, status: str, asked: str, shown: bool
) -> None:
    plan = make_plan(plan_session, task_data("api"))
    plan_accept(plan=plan, actor=Actor.system("t"), start=False)
    task = Task.objects.get(plan=plan)
    Task.objects.filter(pk=task.pk).update(status=status)
    # The runtime row outlives the task's move until the unit's release.
    TaskRuntime.objects.create(task=task, worker="w1", stop_kind=asked, stop_actor_label="ada")
    html = logged_in_client.get(f"/tasks/?session={plan_session.pk}").content.decode()
    assert ("data-stop-asked" in html) == shown
    assert ("(asked by ada)" in html) == shown


def test_the_approvals_total_counts_what_the_approvals_page_counts(
    logged_in_client: Client, plan_session: AgentSession, agent_session: AgentSession
) -> None:
    from agents_app.models import ModeTransition
    from tasks_app.tests.test_headless_watch import decision

    plan = make_plan(plan_session, task_data("api"))
    plan_accept(plan=plan, actor=Actor.system("t"), start=False)
    decision(plan_session)  # a tool call waiting for a person
    decision(plan_session, review_status="not_needed")
    other = AgentSession.objects.create(project=plan_session.project, title="other")
    decision(other)  # another session's: not this board's
    axes = {
        f"{side}_{axis}": value
        for side in ("from", "to")
        for axis, value in plan_session.axes.as_dict().items()
    }
    ModeTransition.objects.create(
        session=plan_session, requires_approval=True, status="pending", actor_kind="system", **axes
    )
    board = task_board(session_id=plan_session.pk)
    assert (board.pending_approvals, board.pending_mode_changes) == (1, 1)
    assert task_board().pending_approvals == 2
    html = logged_in_client.get(f"/tasks/?session={plan_session.pk}").content.decode()
    assert 'data-approvals="1"' in html
    approvals = logged_in_client.get("/approvals/").content.decode()
    assert 'data-pending="2"' in approvals  # both sessions' (the page spans projects)
