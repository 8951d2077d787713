"""Faults of the system met by a unit (``engine.system_faults``), each reproduced
deterministically: the disk full at the worktree, the database connection terminated
mid-unit, verification longer than the stale time, a unit the sweep took for dead,
setting up slower than the idle timeout. Each was found by ``benchmarks/chaos.py``.
Real git repositories and PostgreSQL; the model is scripted."""

from __future__ import annotations

import errno
import threading
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.db import OperationalError, connection, connections
from django.test import override_settings
from django.utils import timezone

from agents_app.models import AgentSession
from agents_app.tests.runtime_helpers import ScriptedModel
from sf_core.git import GitError
from tasks_app.engine import hooks as hooks_module
from tasks_app.engine import outcome, system_faults, unit
from tasks_app.engine.hooks import Heartbeat
from tasks_app.engine.sweep import stale_units, unit_recover
from tasks_app.models import ScheduleStatus, Task, TaskSchedule, Unit
from tasks_app.tests.test_engine import git, repo, run_next, start, task_spec, writes

pytestmark = pytest.mark.django_db
__all__ = ["repo"]  # the fixture, shared with test_engine
DISK_FULL = f"could not write to '/data/worktrees/1/p1-hello-1/.git': {errno.ENOSPC}"


def failing_first(monkeypatch: pytest.MonkeyPatch, times: int, error: BaseException) -> None:
    """``worktree_ensure`` raises ``error`` the first ``times`` calls (a full disk)."""
    real, calls = unit.worktree_ensure, []

    def ensure(ws: Any) -> Path:
        calls.append(ws)
        if len(calls) <= times:
            raise error
        return real(ws)

    monkeypatch.setattr(unit, "worktree_ensure", ensure)


def due_now(task: Task) -> None:
    """Skip the backoff: the test does not wait for it."""
    TaskSchedule.objects.filter(task=task).update(due_at=timezone.now() - timedelta(seconds=1))


def test_a_full_disk_at_the_worktree_is_a_crash_not_a_spent_retry(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session, plan = start(repo, task_spec())
    failing_first(monkeypatch, 1, OSError(errno.ENOSPC, "No space left on device"))

    report = run_next(session, ScriptedModel(*writes("hello")))

    task = plan.tasks.get()
    assert (report.outcome, task.status, task.retry_count) == ("system_fault", "retrying", 0)
    assert "No space left on device" in task.status_reason
    first = Unit.objects.get(task=task)
    assert first.status == "crashed"
    schedule = TaskSchedule.objects.get(task=task)
    assert schedule.status == ScheduleStatus.DUE
    assert schedule.due_at is not None
    assert schedule.due_at <= timezone.now(), "the first crash runs again at once"

    assert run_next(session, ScriptedModel(*writes("hello"))).task_status == "done"


def test_system_faults_in_a_row_back_off_then_fail_the_task_with_the_last_words(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(system_faults, "SYSTEM_FAULT_LIMIT", 3)
    session, plan = start(repo, task_spec())
    failing_first(monkeypatch, 3, GitError(f"git worktree add failed: fatal: {DISK_FULL}"))
    task = plan.tasks.get()

    run_next(session, ScriptedModel())
    due_now(task)
    before = timezone.now()
    run_next(session, ScriptedModel())
    second = TaskSchedule.objects.get(task=task).due_at
    assert second is not None
    assert second >= before + timedelta(seconds=5), "the second one waits"
    assert unit.unit_run(task_id=task.pk, worker="early") is None, "not before it is due"
    due_now(task)
    report = run_next(session, ScriptedModel())

    task.refresh_from_db()
    assert (report.task_status, task.retry_count) == ("failed", 0)
    assert task.status_reason.startswith("3 system faults in a row")
    assert DISK_FULL in task.status_reason
    assert list(Unit.objects.filter(task=task).values_list("status", flat=True)) == ["crashed"] * 3


def test_setting_up_longer_than_the_idle_timeout_is_not_idleness(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session, _ = start(repo, task_spec())
    real = unit.worktree_prepare

    def slow_setup(**kwargs: Any) -> Any:
        time.sleep(1.3)  # a setup command, the first import of litellm on a busy host
        return real(**kwargs)

    monkeypatch.setattr(unit, "worktree_prepare", slow_setup)
    with override_settings(SF_UNIT_IDLE_TIMEOUT=timedelta(seconds=1)):
        report = run_next(session, ScriptedModel(*writes("hello")))

    assert (report.outcome, report.task_status) == ("verified", "done")


def test_a_unit_the_sweep_recovered_while_it_ran_changes_nothing_at_its_end(
    repo: Path,
) -> None:
    session, plan = start(repo, task_spec())
    task = plan.tasks.get()

    class TakenForDead(ScriptedModel):
        """The sweep finds the unit's heartbeat stale while the model answers."""

        def __call__(self, **kwargs: Any) -> Any:
            if len(self.calls) == 1:
                assert unit_recover(unit=Unit.objects.get(task=task, status="running"))
            return super().__call__(**kwargs)

    report = run_next(session, TakenForDead(*writes("hello")))

    task.refresh_from_db()
    assert (report.outcome, task.status, task.retry_count) == ("superseded", "retrying", 0)
    assert "sf(hello)" not in git(repo, "log", "--all", "--format=%s"), "no checkpoint"
    assert Unit.objects.get(task=task).status == "crashed"


def test_a_heartbeat_outlives_a_database_error(monkeypatch: pytest.MonkeyPatch) -> None:
    beats: list[float] = []

    def beat(self: Heartbeat) -> None:
        beats.append(time.monotonic())
        if len(beats) == 2:
            raise OperationalError("terminating connection due to administrator command")

    monkeypatch.setattr(Heartbeat, "beat", beat)
    monkeypatch.setattr(hooks_module, "close_old_connections", lambda: None)
    with override_settings(SF_WORKER_HEARTBEAT=timedelta(milliseconds=50)):
        heartbeat = Heartbeat(task_id=1)
        with heartbeat:
            deadline = time.monotonic() + 5
            while len(beats) < 4 and time.monotonic() < deadline:
                time.sleep(0.05)
            alive = heartbeat.thread.is_alive()
    assert alive
    assert len(beats) >= 4, "it went on beating after the error"


@pytest.mark.django_db(transaction=True)
def test_a_database_connection_terminated_mid_unit_is_recovered(repo: Path) -> None:
    session, plan = start(repo, task_spec())
    task = plan.tasks.get()

    class Terminating(ScriptedModel):
        """An administrator (or a failover) terminates the unit's database session
        while the model is answering."""

        def __call__(self, **kwargs: Any) -> Any:
            if len(self.calls) == 0:
                with connection.cursor() as cursor:
                    cursor.execute("SELECT pg_backend_pid()")
                    pid = cursor.fetchone()[0]
                killer = connections.create_connection("default")
                try:
                    with killer.cursor() as cursor:
                        cursor.execute("SELECT pg_terminate_backend(%s)", [pid])
                finally:
                    killer.close()
            return super().__call__(**kwargs)

    report = run_next(session, Terminating(*writes("hello")))

    task.refresh_from_db()
    assert report is not None
    assert report.outcome == "system_fault", report
    assert (task.status, task.retry_count) == ("retrying", 0)
    assert Unit.objects.get(task=task).status == "crashed"
    assert run_next(session, ScriptedModel(*writes("hello"))).task_status == "done"


@pytest.mark.django_db(transaction=True)
def test_verifying_longer_than_the_stale_time_is_not_taken_for_a_dead_unit(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session, _ = start(repo, task_spec())
    AgentSession.objects.filter(pk=session.pk).update(driver="workers")  # swept
    real, seen = outcome.verify, []

    def slow_verify(*args: Any, **kwargs: Any) -> Any:
        time.sleep(1.5)  # a test suite, longer than SF_WORKER_STALE_AFTER
        seen.extend(stale_units())
        return real(*args, **kwargs)

    monkeypatch.setattr(outcome, "verify", slow_verify)
    fast = {"SF_WORKER_HEARTBEAT": timedelta(milliseconds=200)}
    with override_settings(SF_WORKER_STALE_AFTER=timedelta(seconds=1), **fast):
        report = run_next(session, ScriptedModel(*writes("hello")))

    assert seen == [], "the sweep would have taken the verifying unit for a dead one"
    assert report.task_status == "done"


def test_a_heartbeat_thread_is_started_before_the_worktree(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Creating a large worktree can take longer than the stale time, too."""
    session, _ = start(repo, task_spec())
    started = threading.Event()
    real_ensure = unit.worktree_ensure

    def ensure(ws: Any) -> Path:
        if any(thread.name.startswith("sf-unit-") for thread in threading.enumerate()):
            started.set()
        return real_ensure(ws)

    monkeypatch.setattr(unit, "worktree_ensure", ensure)
    run_next(session, ScriptedModel(*writes("hello")))
    assert started.is_set()
