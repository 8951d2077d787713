"""The engine's doctor checks, each against a real broken state: a killed process
holding a task, an orphaned worktree and branch in a real repository, a git lock left
behind, runtime rows without a unit, workers gone, a clock ahead, a unit past its
timeout. Every fix is run twice: the second run finds nothing and writes nothing."""

from __future__ import annotations

import os
import socket
import subprocess
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone

from agents_app.models import AgentSession, RepairRecord
from agents_app.services.repairs import doctor_repair
from sf_core.actors import Actor
from sf_core.doctor import CheckReport, Severity, doctor_run
from tasks_app.engine.worktrees import worktree_ensure
from tasks_app.models import Task, TaskRuntime, TaskTransition, Unit, UnitStatus, Worker
from tasks_app.tests.conftest import make_plan, task_data
from tasks_app.workspaces import workspace_of

pytestmark = pytest.mark.django_db
ACTOR = Actor.system("test-doctor")
HERE = socket.gethostname()


def check(check_id: str) -> CheckReport:
    (report,) = doctor_run(ids=[check_id]).checks
    return report


def fix_twice(check_id: str) -> list[str]:
    """Fix, then fix again: the second run must find nothing and record nothing."""
    first = doctor_repair(actor=ACTOR, ids=[check_id])
    rows = RepairRecord.objects.count()
    assert doctor_repair(actor=ACTOR, ids=[check_id]) == []
    assert RepairRecord.objects.count() == rows
    return [f"{r.target}: {r.action}" for r in first]


def dead_pid() -> int:
    process = subprocess.Popen(["sleep", "60"])
    process.kill()
    process.wait()
    return process.pid


@pytest.fixture
def running_task(agent_session: AgentSession) -> tuple[Task, Unit]:
    plan = make_plan(agent_session, task_data("a"))
    task = plan.tasks.get()
    Task.objects.filter(pk=task.pk).update(status="in_progress")
    task.refresh_from_db()
    unit = Unit.objects.create(task=task, attempt=1)
    return task, unit


def runtime(task: Task, *, worker: str, pid: int, age: timedelta = timedelta(0)) -> TaskRuntime:
    return TaskRuntime.objects.create(
        task=task, worker=worker, pid=pid, last_heartbeat_at=timezone.now() - age
    )


def test_a_task_held_by_a_killed_process_is_released(running_task: tuple[Task, Unit]) -> None:
    task, unit = running_task
    pid = dead_pid()
    runtime(task, worker=f"celery@{HERE}", pid=pid)  # a fresh heartbeat: only the pid tells

    report = check("locks.dead")

    assert report.severity == Severity.WARNING
    assert report.fixable
    assert f"whose process {pid} is dead" in report.findings[0].message
    assert fix_twice("locks.dead") == [
        f"unit {unit.pk}: recorded crashed: its process {pid} on celery@{HERE} is dead "
        "(doctor, test-doctor)"
    ]
    unit.refresh_from_db()
    assert unit.status == UnitStatus.CRASHED
    assert not TaskRuntime.objects.filter(task=task).exists()
    assert TaskTransition.objects.filter(task=task, from_status="in_progress").exists()
    assert RepairRecord.objects.get().check_id == "locks.dead"


def test_a_live_process_or_another_host_is_not_a_dead_holder(
    running_task: tuple[Task, Unit],
) -> None:
    task, _ = running_task
    runtime(task, worker=f"celery@{HERE}", pid=os.getpid())
    assert check("locks.dead").severity == Severity.OK
    TaskRuntime.objects.filter(task=task).update(worker="celery@elsewhere", pid=dead_pid())
    assert check("locks.dead").severity == Severity.OK  # only a stale heartbeat tells there


def test_a_git_lock_left_by_a_dead_git_is_removed(project: Any) -> None:
    lock = Path(project.repo_path, ".git", "index.lock")
    lock.write_text("")
    assert check("locks.dead").severity == Severity.OK, "a fresh lock is a live git's"
    old = timezone.now().timestamp() - 120
    os.utime(lock, (old, old))

    report = check("locks.dead")

    assert report.findings[0].target == str(lock)
    assert fix_twice("locks.dead") == [f"{lock}: stale git lock removed"]
    assert not lock.exists()


def git(repo: str, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, check=True, capture_output=True, text=True
    ).stdout.strip()


def test_an_orphaned_worktree_and_branch_go_and_a_live_task_keeps_its_own(
    agent_session: AgentSession, settings: Any, tmp_path: Path
) -> None:
    settings.SF_DATA_DIR = tmp_path / "data"
    project = agent_session.project
    live = make_plan(agent_session, task_data("live")).tasks.get()
    live_ws = workspace_of(live)
    worktree_ensure(live_ws)
    ghost = tmp_path / "data" / "worktrees" / str(project.pk) / "p999-ghost-1"
    git(project.repo_path, "worktree", "add", "-q", "-b", "sf/p999/ghost/1", str(ghost))
    git(project.repo_path, "branch", "sf/p998/gone/1")  # a branch with no worktree
    commit = git(project.repo_path, "rev-parse", "sf/p998/gone/1")

    report = check("worktrees.orphaned")

    assert {f.target for f in report.findings} == {
        str(ghost),
        f"sf/p999/ghost/1 at {commit}",
        f"sf/p998/gone/1 at {commit}",
    }
    done = fix_twice("worktrees.orphaned")
    assert f"{ghost}: orphaned worktree removed" in done
    assert (
        f"{project.repo_path}: sf/p998/gone/1: orphaned branch deleted (was {commit}; "
        f"git branch sf/p998/gone/1 {commit})" in done
    )
    assert not ghost.exists()
    branches = git(project.repo_path, "branch", "--list", "--format=%(refname:short)", "sf/*")
    assert branches.split() == [live_ws.branch], "only the live task's branch is left"
    assert live_ws.path.is_dir()
    assert check("worktrees.orphaned").severity == Severity.OK


def test_a_worktree_deleted_behind_gits_back_is_pruned(
    agent_session: AgentSession, settings: Any, tmp_path: Path
) -> None:
    settings.SF_DATA_DIR = tmp_path / "data"
    task = make_plan(agent_session, task_data("a")).tasks.get()
    ws = workspace_of(task)
    worktree_ensure(ws)
    Task.objects.filter(pk=task.pk).update(status="cancelled")  # its cleanup never ran
    subprocess.run(["rm", "-rf", str(ws.path)], check=True)

    messages = [f.message for f in check("worktrees.orphaned").findings]

    assert any("is registered but gone" in m for m in messages)
    assert any(f"branch {ws.branch} belongs to no live task" in m for m in messages)
    fix_twice("worktrees.orphaned")
    assert str(ws.path) not in git(agent_session.project.repo_path, "worktree", "list")


def test_a_runtime_row_without_a_running_unit_is_deleted(
    agent_session: AgentSession,
) -> None:
    task = make_plan(agent_session, task_data("a")).tasks.get()
    row = runtime(task, worker="celery@x", pid=1, age=timedelta(minutes=5))
    Unit.objects.create(task=task, attempt=1, status=UnitStatus.SUCCEEDED)

    assert check("runtime.orphaned").findings[0].target == f"runtime of task {task.pk}"
    assert fix_twice("runtime.orphaned") == [
        f"runtime of task {task.pk}: deleted (no running unit)"
    ]
    assert not TaskRuntime.objects.filter(pk=row.pk).exists()


def test_a_unit_whose_worker_is_gone_is_recovered(running_task: tuple[Task, Unit]) -> None:
    task, unit = running_task
    runtime(task, worker="celery@elsewhere", pid=1, age=timedelta(minutes=5))

    assert check("units.lost").findings[0].target == f"unit {unit.pk}"
    assert fix_twice("units.lost") == [f"unit {unit.pk}: recorded crashed; its task runs again"]
    task.refresh_from_db()
    assert task.status != "in_progress"


def test_a_unit_past_its_hard_timeout_is_stuck(
    running_task: tuple[Task, Unit], settings: Any
) -> None:
    task, unit = running_task
    settings.SF_UNIT_HARD_TIMEOUT = timedelta(seconds=10)
    Unit.objects.filter(pk=unit.pk).update(started_at=timezone.now() - timedelta(hours=1))
    runtime(task, worker="celery@elsewhere", pid=1)  # still beating: not lost, stuck

    assert check("units.lost").severity == Severity.OK
    assert "runs past the hard timeout" in check("tasks.stuck").findings[0].message
    assert fix_twice("tasks.stuck") == [f"unit {unit.pk}: recorded crashed (past the hard timeout)"]


def test_a_worker_that_died_here_is_marked_stopped_and_a_remote_one_is_only_reported(
    settings: Any,
) -> None:
    stale = timezone.now() - timedelta(minutes=5)
    here = Worker.objects.create(
        hostname=f"celery@{HERE}", pid=dead_pid(), started_at=stale, last_heartbeat_at=stale
    )
    Worker.objects.create(
        hostname="celery@elsewhere", pid=1, started_at=stale, last_heartbeat_at=stale
    )

    findings = check("workers.heartbeat").findings

    assert {(f.target, f.fixable) for f in findings if f.target} == {
        (f"worker celery@{HERE}", True),
        ("worker celery@elsewhere", False),
    }
    assert fix_twice("workers.heartbeat") == [
        f"worker celery@{HERE}: marked stopped (pid {here.pid} dead)"
    ]
    here.refresh_from_db()
    assert here.stopped_at is not None
    assert Worker.objects.get(hostname="celery@elsewhere").stopped_at is None


def test_a_worker_clock_ahead_of_the_database_is_skew() -> None:
    now = timezone.now()
    Worker.objects.create(
        hostname="celery@fast", pid=1, started_at=now, last_heartbeat_at=now + timedelta(minutes=1)
    )

    (finding,) = check("workers.clock").findings

    assert finding.severity == Severity.ERROR  # past half the stale window: looks dead
    assert finding.message.startswith("the clock of worker celery@fast is 6")
