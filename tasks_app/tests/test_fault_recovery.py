"""What the sweep and dispatch recover after a fault outside the unit: the broker down
while sending, messages lost with a Redis restart (and a long queue that is not lost),
a task left between two steps, a git lock left behind at the merge, the checked-out
base left behind by a merge cut off. Each was found by ``benchmarks/chaos.py``."""

from __future__ import annotations

import os
import subprocess
import time
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.test import override_settings
from django.utils import timezone
from kombu.exceptions import OperationalError as BrokerDown

from agents_app.models import AgentSession
from agents_app.tests.runtime_helpers import ScriptedModel
from sf_core import git as git_module
from sf_core.actors import Actor
from sf_core.git import GitError
from tasks_app.engine import broker, dispatch, merge_queue, review, unit
from tasks_app.engine.review import task_approve
from tasks_app.engine.sweep import engine_sweep
from tasks_app.engine.worktrees import worktree_ensure
from tasks_app.lifecycle import task_transition
from tasks_app.models import MergeRequest, ScheduleStatus, Task, TaskSchedule, TaskTransition, Unit
from tasks_app.services import schedule_ready
from tasks_app.tests.test_engine import git, repo, run_next, start, task_spec, writes
from tasks_app.workspaces import workspace_of

pytestmark = pytest.mark.django_db
__all__ = ["repo"]  # the fixture, shared with test_engine
AN_HOUR_AGO = timedelta(hours=1)


def on_workers(repo: Path, *tasks: dict[str, Any]) -> tuple[AgentSession, list[Task]]:
    session, plan = start(repo, *tasks)
    AgentSession.objects.filter(pk=session.pk).update(driver="workers")
    schedule_ready(plan=plan)
    return session, list(plan.tasks.order_by("key"))


def sent_long_ago(tasks: list[Task]) -> None:
    TaskSchedule.objects.filter(task__in=tasks).update(enqueued_at=timezone.now() - AN_HOUR_AGO)


@override_settings(CELERY_TASK_ALWAYS_EAGER=False)
def test_a_send_the_broker_refuses_is_left_unsent_for_the_sweep(
    repo: Path, monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: Any
) -> None:
    session, tasks = on_workers(repo, task_spec())

    def down(*_: Any, **__: Any) -> None:
        raise BrokerDown("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    monkeypatch.setattr(broker.current_app, "send_task", down)
    with django_capture_on_commit_callbacks(execute=True):
        assert dispatch.dispatch(session_id=session.pk) == [tasks[0].pk]  # no exception

    schedule = TaskSchedule.objects.get(task=tasks[0])
    assert (schedule.status, schedule.enqueued_at) == (ScheduleStatus.DUE, None)


@override_settings(CELERY_TASK_ALWAYS_EAGER=False)
def test_a_long_queue_is_not_sent_again_but_a_lost_one_is(
    repo: Path, monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: Any
) -> None:
    session, tasks = on_workers(repo, task_spec("a"), task_spec("b"))
    sent: list[list[int]] = []
    monkeypatch.setattr(broker.current_app, "send_task", lambda name, args, **_: sent.append(args))
    sent_long_ago(tasks)

    monkeypatch.setattr(broker, "broker_backlog", lambda queue: 2)  # both still queued
    with django_capture_on_commit_callbacks(execute=True):
        assert dispatch.dispatch(session_id=session.pk) == []
    assert sent == []

    monkeypatch.setattr(broker, "broker_backlog", lambda queue: 0)  # Redis restarted
    with django_capture_on_commit_callbacks(execute=True):
        assert sorted(dispatch.dispatch(session_id=session.pk)) == sorted(t.pk for t in tasks)
    assert sorted(sent) == sorted([t.pk] for t in tasks)


def test_the_backlog_is_what_the_broker_holds(monkeypatch: pytest.MonkeyPatch) -> None:
    """Against the real broker (the tests' Redis), on a queue of its own."""
    monkeypatch.setattr(broker, "BACKLOG_FRESH_FOR", 0.0)  # ask every time
    queue = f"{settings.CELERY_TASK_DEFAULT_QUEUE}-backlog-{uuid.uuid4().hex[:8]}"
    assert broker.broker_backlog(queue) == 0, "a queue Redis never saw holds nothing"
    try:
        with override_settings(CELERY_TASK_ALWAYS_EAGER=False):
            assert broker.send_by_name("tasks_app.unit_run", args=[0], queue=queue)
            assert broker.send_by_name("tasks_app.unit_run", args=[0], queue=queue)
        assert broker.broker_backlog(queue) == 2
    finally:
        with broker.current_app.connection_for_write() as connection:
            connection.default_channel.queue_purge(queue)


@override_settings(CELERY_TASK_ALWAYS_EAGER=False)
def test_a_task_that_ran_before_is_sent_ahead_of_new_ones(
    repo: Path, monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: Any
) -> None:
    session, (crashed, new) = on_workers(repo, task_spec("a"), task_spec("b"))
    Unit.objects.create(task=crashed, attempt=1, status="crashed", finished_at=timezone.now())
    sent: dict[int, int] = {}

    def send(name: str, args: list[int], queue: str, priority: int) -> None:
        sent[args[0]] = priority

    monkeypatch.setattr(broker.current_app, "send_task", send)
    with django_capture_on_commit_callbacks(execute=True):
        dispatch.dispatch(session_id=session.pk)

    assert sent == {crashed.pk: broker.FIRST, new.pk: broker.NEW}


def test_the_broker_hands_out_what_goes_first_first() -> None:
    """Against the real broker (the tests' Redis), on a queue of its own."""
    queue = f"{settings.CELERY_TASK_DEFAULT_QUEUE}-order-{uuid.uuid4().hex[:8]}"
    try:
        with override_settings(CELERY_TASK_ALWAYS_EAGER=False):
            assert broker.send_by_name(
                "tasks_app.unit_run", args=[1], queue=queue, priority=broker.NEW
            )
            assert broker.send_by_name("tasks_app.unit_run", args=[2], queue=queue)
        with broker.current_app.connection_for_read() as connection:
            first = connection.default_channel.basic_get(queue, no_ack=True)
        assert first is not None
        assert first.headers["argsrepr"] == "[2]"
    finally:
        with broker.current_app.connection_for_write() as connection:
            connection.default_channel.queue_purge(queue)


def test_a_claim_refused_for_a_paused_session_leaves_the_task_unsent(repo: Path) -> None:
    """Its message is used up: counted as still queued, it would hide a loss."""
    session, tasks = on_workers(repo, task_spec())
    sent_long_ago(tasks)
    AgentSession.objects.filter(pk=session.pk).update(paused=True)

    assert unit.unit_run(task_id=tasks[0].pk, worker="w") is None

    assert TaskSchedule.objects.get(task=tasks[0]).enqueued_at is None


def test_a_task_left_verifying_by_a_fault_runs_again(repo: Path) -> None:
    session, plan = start(repo, task_spec())
    AgentSession.objects.filter(pk=session.pk).update(driver="workers")
    task = plan.tasks.get()
    for status in ("in_progress", "verifying"):
        task_transition(task=task, to=status, reason="the unit ran")
    # The unit's end was recorded; the connection went before the task's next move.
    Unit.objects.create(
        task=task, attempt=1, status="succeeded", finished_at=timezone.now() - AN_HOUR_AGO
    )
    TaskSchedule.objects.filter(task=task).update(status=ScheduleStatus.DISPATCHED)

    engine_sweep()

    task.refresh_from_db()
    assert (task.status, task.retry_count) == ("retrying", 0)
    assert TaskSchedule.objects.get(task=task).status == ScheduleStatus.DUE


def test_an_automatic_approval_lost_to_a_fault_is_given_again(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session, plan = start(repo, task_spec())  # trusted, low risk: approved automatically
    task = plan.tasks.get()
    AgentSession.objects.filter(pk=session.pk).update(driver="workers")
    with monkeypatch.context() as cut_off:  # the connection went before the approval
        cut_off.setattr(review, "task_approve", lambda **_: None)
        assert run_next(session, ScriptedModel(*writes("hello"))).task_status == "review"
    assert not MergeRequest.objects.filter(task=task).exists()
    TaskTransition.objects.filter(task=task).update(created_at=timezone.now() - AN_HOUR_AGO)

    engine_sweep()  # no worker alive: the queue runs here

    assert Task.objects.get(pk=task.pk).status == "done"
    assert git(repo, "log", "--format=%s", "main").count("sf: merge hello") == 1


def aged(lock: Path) -> Path:
    lock.write_text("")
    then = time.time() - git_module.GIT_LOCK_STALE_SECONDS - 1
    os.utime(lock, (then, then))
    return lock


@pytest.mark.parametrize("lock", ["index.lock", "refs/heads/main.lock"])
def test_a_git_lock_left_in_the_repository_does_not_refuse_the_merge(repo: Path, lock: str) -> None:
    session, _ = start(repo, task_spec())
    left = aged(repo / ".git" / lock)

    assert run_next(session, ScriptedModel(*writes("hello"))).task_status == "done"

    assert not left.exists()
    assert (repo / "hello.txt").read_text() == "hello", "the checked-out main is refreshed"


def test_a_checked_out_base_a_cut_off_merge_left_behind_is_caught_up(repo: Path) -> None:
    """The base ref moved but its files were not refreshed (the worker died between)."""
    session, _ = start(repo, task_spec())
    head = git(repo, "rev-parse", "HEAD")
    subprocess.run(["git", "checkout", "-q", "-b", "side"], cwd=repo, check=True)
    (repo / "other.txt").write_text("other\n")
    subprocess.run(["git", "add", "other.txt"], cwd=repo, check=True)
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "other"],
        cwd=repo,
        check=True,
    )
    moved = git(repo, "rev-parse", "HEAD")
    subprocess.run(["git", "checkout", "-q", "main"], cwd=repo, check=True)
    subprocess.run(["git", "update-ref", "refs/heads/main", moved, head], cwd=repo, check=True)
    assert git(repo, "status", "--porcelain", "--untracked-files=no"), "lagging behind"

    assert run_next(session, ScriptedModel(*writes("hello"))).task_status == "done"

    assert (repo / "other.txt").read_text() == "other\n"
    assert git(repo, "status", "--porcelain", "--untracked-files=no") == ""


def test_a_persons_uncommitted_change_still_refuses_the_merge(repo: Path) -> None:
    session, plan = start(repo, task_spec())
    (repo / "greet.py").write_text("# a person's edit\n")

    assert run_next(session, ScriptedModel(*writes("hello"))).task_status == "blocked"
    assert "uncommitted changes" in plan.tasks.get().status_reason


def test_a_task_backing_off_is_not_due_until_its_time(repo: Path) -> None:
    session, tasks = on_workers(repo, task_spec())
    later = timezone.now() + timedelta(minutes=1)
    TaskSchedule.objects.filter(task=tasks[0]).update(due_at=later)

    assert dispatch.due_tasks(session.pk) == []
    assert dispatch.next_due_at(session.pk) == later
    TaskSchedule.objects.filter(task=tasks[0]).update(due_at=timezone.now())
    assert dispatch.due_tasks(session.pk) == [tasks[0].pk]


def test_an_actor_is_named_on_the_recovered_moves(repo: Path) -> None:
    """The transitions the sweep makes say who made them."""
    session, plan = start(repo, task_spec())
    AgentSession.objects.filter(pk=session.pk).update(driver="workers")
    task = plan.tasks.get()
    task_transition(task=task, to="in_progress", reason="unit started", actor=Actor.system("w"))
    Unit.objects.create(
        task=task, attempt=1, status="failed", finished_at=timezone.now() - AN_HOUR_AGO
    )
    engine_sweep()
    last = TaskTransition.objects.filter(task=task).order_by("-pk").first()
    assert last is not None
    assert (last.to_status, last.actor_label) == ("retrying", "sweep")


def test_a_merge_a_full_disk_stopped_waits_queued_and_merges_later(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session, plan = start(repo, task_spec(risk_level="high"))  # a person approves
    task = plan.tasks.get()
    assert run_next(session, ScriptedModel(*writes("hello"))).task_status == "review"
    real = merge_queue.scratch_worktree_add

    def full(*_: Any, **__: Any) -> Path:
        raise GitError("git worktree add failed: fatal: No space left on device")

    monkeypatch.setattr(merge_queue, "scratch_worktree_add", full)
    assert task_approve(task=task, actor=Actor.system("ada")).status == "review"
    entry = MergeRequest.objects.get(task=task)
    assert (entry.status, entry.output) == (
        "queued",
        "put back after a system fault: git worktree add failed: fatal: No space left on device",
    )

    monkeypatch.setattr(merge_queue, "scratch_worktree_add", real)
    assert merge_queue.merge_queue_run(project_id=session.project_id) == 1
    assert Task.objects.get(pk=task.pk).status == "done"


def test_a_worktree_a_killed_git_left_half_made_is_made_again(repo: Path) -> None:
    """`git worktree add` killed mid-checkout: registered, locked "initializing", files
    missing. Reused as it was, the unit's commit would delete them from the base."""
    session, plan = start(repo, task_spec())
    ws = workspace_of(plan.tasks.get())
    worktree_ensure(ws)
    admin = Path(git(ws.path, "rev-parse", "--git-dir"))
    (admin / "locked").write_text("initializing")
    (ws.path / "greet.py").unlink()  # the checkout did not get that far

    assert run_next(session, ScriptedModel(*writes("hello"))).task_status == "done"

    assert (repo / "greet.py").exists(), "nothing deleted on the base"
    assert "greet.py" not in git(repo, "log", "-1", "--name-only", "--format=", "HEAD^2")
