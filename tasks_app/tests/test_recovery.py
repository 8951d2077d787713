"""Recovery from a failed task: retry, cancel and skip; fresh branches per plan and
attempt; plans and sessions that finish. Real git repositories, scripted models."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents_app.badge import badge_for
from agents_app.models import ModeTransition
from agents_app.tests.runtime_helpers import ScriptedModel
from sf_core.actors import Actor
from sf_core.errors import InvalidTransition
from tasks_app.completion import plan_outcome
from tasks_app.engine.recovery import task_cancel, task_retry, task_skip
from tasks_app.models import Task, TaskRuntime, TaskTransition
from tasks_app.schemas import plan_spec_parse
from tasks_app.selectors import task_board
from tasks_app.services import plan_accept, plan_create
from tasks_app.tests.test_engine import git, repo, run_next, start, task_spec, writes

pytestmark = pytest.mark.django_db
__all__ = ["repo"]  # the fixture, shared with test_engine


def failing(key: str = "hello", **extra: object) -> dict[str, object]:
    """A task whose verification cannot pass, with no retries: one unit, then failed."""
    return task_spec(key, max_retries=0, verify=["test -f hello.txt && false"], **extra)


def worktrees(repo: Path) -> list[str]:
    return [
        line.removeprefix("worktree ")
        for line in git(repo, "worktree", "list", "--porcelain").splitlines()
        if line.startswith("worktree ")
    ]


def test_two_plans_with_the_same_task_key_on_one_repo_both_run(repo: Path) -> None:
    first_session, _ = start(repo, failing())
    assert run_next(first_session, ScriptedModel(*writes("a"))).task_status == "failed"

    second_session, second_plan = start(repo, task_spec())
    report = run_next(second_session, ScriptedModel(*writes("hello")))

    assert report.outcome == "verified", report.detail
    assert second_plan.tasks.get().status == "done"


def hello(key: str = "hello", **extra: object) -> dict[str, object]:
    """A task that passes only when hello.txt says hello; no automatic retries."""
    return task_spec(key, max_retries=0, **extra)


def sf_branches(repo: Path) -> list[str]:
    return git(repo, "branch", "--list", "sf/*", "--format=%(refname:short)").split()


def assert_clean(repo: Path) -> None:
    """`git worktree list` shows only the main worktree, and no task branch is left."""
    assert worktrees(repo) == [str(repo.resolve())]
    assert sf_branches(repo) == []


def test_a_retried_task_runs_again_from_a_fresh_branch_and_reopens(repo: Path) -> None:
    session, plan = start(repo, hello())
    assert run_next(session, ScriptedModel(*writes("goodbye"))).task_status == "failed"
    task = plan.tasks.get()
    plan.refresh_from_db()
    session.refresh_from_db()
    assert (plan.status, session.status) == ("failed", "failed")
    assert len(worktrees(repo)) == 2, "the failed attempt's worktree is kept to inspect"
    assert sf_branches(repo) == [task.branch]

    task = task_retry(task=task, actor=Actor.system("ada"))

    assert (task.status, task.branch_attempt, task.retry_count) == ("todo", 2, 0)
    assert_clean(repo)
    plan.refresh_from_db()
    session.refresh_from_db()
    assert (plan.status, session.status) == ("accepted", "active"), "the retry re-opens both"
    assert TaskTransition.objects.filter(
        task=task, from_status="failed", to_status="todo", actor_label="ada"
    ).exists()

    report = run_next(session, ScriptedModel(*writes("hello")))

    assert report.task_status == "done"
    history = git(repo, "log", "--format=%s", "main").splitlines()
    assert "sf(hello): attempt 2" in history
    assert "sf(hello): attempt 1" not in history, "the failed attempt's tree is not merged"
    assert_clean(repo)
    plan.refresh_from_db()
    session.refresh_from_db()
    assert (plan.status, session.status) == ("done", "completed")


def test_a_finished_session_stops_pulsing(repo: Path) -> None:
    session, plan = start(repo, hello())
    assert any(part.pulsing for part in badge_for(session).parts), "autonomous, running"

    run_next(session, ScriptedModel(*writes("hello")))

    plan.refresh_from_db()
    session.refresh_from_db()
    assert (plan.status, session.status) == ("done", "completed")
    assert plan.status_reason == "done: 1 done"
    shown = badge_for(session)
    assert session.run_control == "autonomous"
    assert shown.finished == "completed"
    assert not any(part.pulsing for part in shown.parts)
    assert ModeTransition.objects.filter(
        session=session, reason__startswith=f"session completed: plan {plan.pk} done"
    ).exists()


def test_a_new_plan_reopens_a_completed_session(repo: Path) -> None:
    session, _ = start(repo, hello())
    run_next(session, ScriptedModel(*writes("hello")))
    session.refresh_from_db()
    assert session.status == "completed"
    spec = plan_spec_parse({"summary": "more", "tasks": [hello("again", verify=["true"])]})
    plan_accept(
        plan=plan_create(session=session, spec=spec, source="api"),
        actor=Actor.system("ada"),
        autonomous=True,
        start=False,
    )
    session.refresh_from_db()
    assert session.status == "active"
    assert any(part.pulsing for part in badge_for(session).parts)


def test_cancel_removes_the_worktree_and_the_branch(repo: Path) -> None:
    session, plan = start(repo, hello())
    run_next(session, ScriptedModel(*writes("goodbye")))
    task = plan.tasks.get()
    assert len(worktrees(repo)) == 2

    task = task_cancel(task=task, actor=Actor.system("ada"), reason="not needed")

    assert task.status == "cancelled"
    assert_clean(repo)
    plan.refresh_from_db()
    session.refresh_from_db()
    assert (plan.status, session.status) == ("cancelled", "completed")
    with pytest.raises(InvalidTransition, match="only a task that is"):
        task_retry(task=task, actor=Actor.system("ada"))


def test_skip_lets_success_dependents_proceed(repo: Path) -> None:
    session, plan = start(
        repo,
        hello("first"),
        hello("second", depends_on=["first"], verify=["true"]),
        hello("only-if-failed", depends_on=[{"task": "first", "condition": "failure"}]),
    )
    assert run_next(session, ScriptedModel(*writes("goodbye"))).task_status == "failed"
    second = plan.tasks.get(key="second")
    assert (second.status, second.hold_reason) == ("blocked", "dependency")
    row = next(r for r in task_board(session_id=session.pk).rows if r.task.key == "second")
    assert row.next_action.startswith(
        "waiting on a dependency that ended the wrong way: first failed; this task needs it done"
    )
    assert "retry or skip" in row.next_action
    failed_row = next(r for r in task_board(session_id=session.pk).rows if r.task.key == "first")
    assert failed_row.actions == ["retry", "skip", "cancel"]

    task_skip(task=plan.tasks.get(key="first"), actor=Actor.system("ada"))

    second.refresh_from_db()
    assert second.status == "todo", "skipped counts as finished without a merge"
    assert_clean(repo)
    # The failure branch can no longer run; only `second` runs.
    assert run_next(session, ScriptedModel(*writes("second", "second.txt"))).task_status == "done"
    statuses = dict(plan.tasks.values_list("key", "status"))
    assert statuses == {"first": "skipped", "second": "done", "only-if-failed": "blocked"}
    plan.refresh_from_db()
    assert plan.status == "cancelled", "a dependent that can never run ends the plan"
    assert_clean(repo)


def test_a_running_task_is_not_recovered_but_its_unit_is_asked_to_stop(repo: Path) -> None:
    _, plan = start(repo, hello())
    task = plan.tasks.get()
    Task.objects.filter(pk=task.pk).update(status="in_progress")
    with pytest.raises(InvalidTransition, match="a unit is running"):
        task_skip(task=task, actor=Actor.system("ada"))
    # In progress with no unit running it (a dead worker's): nothing to ask, said so.
    with pytest.raises(InvalidTransition, match="no unit is running it now"):
        task_cancel(task=task, actor=Actor.system("ada"))
    TaskRuntime.objects.create(task=task, worker="w1")
    task_cancel(task=task, actor=Actor.system("ada"), reason="wrong")
    runtime = TaskRuntime.objects.get(task=task)
    assert (runtime.stop_kind, runtime.stop_reason, runtime.stop_actor_label) == (
        "cancel",
        "wrong",
        "ada",
    )
    assert Task.objects.get(pk=task.pk).status == "in_progress"  # the unit ends it


@pytest.mark.parametrize(
    ("statuses", "outcome"),
    [
        ([("done", ""), ("skipped", "")], "done"),
        ([("done", ""), ("review", "")], None),
        ([("failed", ""), ("blocked", "dependency")], "failed"),
        ([("failed", ""), ("blocked", "approval_needed")], None),
        ([("cancelled", ""), ("done", "")], "cancelled"),
        ([("skipped", ""), ("blocked", "dependency")], "cancelled"),
    ],
)
def test_plan_outcome(statuses: list[tuple[str, str]], outcome: str | None) -> None:
    assert plan_outcome(statuses) == outcome
