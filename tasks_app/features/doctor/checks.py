"""The doctor's checks of the engine's runtime state: workers and their heartbeats,
clock skew, runtime rows without a live unit, units whose worker is gone, tasks stuck
past their timeouts, and locks held by dead processes.

Most of these the workers' sweep recovers on its own every ``SF_SWEEP_INTERVAL``; the
doctor says so when no worker is alive to sweep, and its fixes are the sweep's own
services (``unit_recover``, ``orphans_recover``), which write the tasks' transitions.
A process is judged dead only on this host (``os.kill(pid, 0)``); elsewhere, a stale
heartbeat is the evidence. Registered in ``TasksAppConfig.ready``.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db import connection
from django.utils import timezone

from sf_core.actors import Actor
from sf_core.doctor import Check, Finding, RepairDone, Severity, register
from tasks_app.engine.orphans import orphans_found, orphans_recover
from tasks_app.engine.sweep import stale_units, unit_recover
from tasks_app.engine.system_faults import unit_crashed
from tasks_app.features.doctor import git_checks as doctor_git
from tasks_app.models import Task, TaskRuntime, Unit, UnitStatus, Worker


def _stale_before() -> datetime:
    return timezone.now() - settings.SF_WORKER_STALE_AFTER


def pid_alive(pid: int | None) -> bool:
    """Whether ``pid`` is a live process here (a process of another user counts)."""
    if not pid or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def local_host(worker: str) -> bool:
    """Whether a Celery worker name (``name@host``) names this host (``SF_WORKER_HOST``,
    the host name unless set: each worker host judges its own processes only)."""
    return worker.rpartition("@")[2] == settings.SF_WORKER_HOST and "@" in worker


# --- workers --------------------------------------------------------------------------


def _dead_local_workers(running: list[Worker] | None = None) -> list[Worker]:
    if running is None:
        running = list(Worker.objects.filter(stopped_at__isnull=True).order_by("hostname"))
    return [w for w in running if local_host(w.hostname) and not pid_alive(w.pid)]


def workers_check() -> list[Finding]:
    running = list(Worker.objects.filter(stopped_at__isnull=True).order_by("hostname"))
    dead = {w.pk for w in _dead_local_workers(running)}
    stale = _stale_before()
    findings = [
        Finding(
            severity=Severity.WARNING,
            message=f"worker {w.hostname} stopped beating without saying goodbye",
            evidence=[f"pid {w.pid}, last heartbeat {w.last_heartbeat_at:%Y-%m-%d %H:%M:%S}"]
            + (["its process is gone from this host"] if w.pk in dead else []),
            fixable=w.pk in dead,
            target=f"worker {w.hostname}",
        )
        for w in running
        if w.pk in dead or w.last_heartbeat_at < stale
    ]
    online = sum(1 for w in running if w.last_heartbeat_at >= stale and w.pk not in dead)
    if settings.SF_TEAM_MODE and settings.REDIS_URL and online == 0:
        findings.append(
            Finding(
                severity=Severity.WARNING,
                message="no worker is online: units wait, and nothing sweeps",
                evidence=["start one: scripts/run.sh (celery -A sf_web worker)"],
            )
        )
    return findings


def workers_fix(actor: Actor) -> list[RepairDone]:
    """Mark stopped the workers whose process is gone from this host (as its clean
    shutdown would have): a remote one only looks dead, and a live worker whose row is
    marked stopped could not beat again."""
    done = []
    for worker in _dead_local_workers():
        changed = Worker.objects.filter(pk=worker.pk, stopped_at__isnull=True).update(
            stopped_at=timezone.now()
        )
        if changed:
            done.append(
                RepairDone(
                    target=f"worker {worker.hostname}",
                    action=f"marked stopped (pid {worker.pid} dead)",
                )
            )
    return done


def clock_check() -> list[Finding]:
    """This process against the database, and each live worker's last heartbeat (its own
    clock) against the database's now: a heartbeat from the future is a clock ahead."""
    # PostgreSQL's CURRENT_TIMESTAMP is the transaction's start: clock_timestamp() is now.
    now_sql = "clock_timestamp()" if connection.vendor == "postgresql" else "CURRENT_TIMESTAMP"
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {now_sql}")
        database_now = cursor.fetchone()[0]
    if timezone.is_naive(database_now):  # SQLite answers in UTC, naive
        database_now = timezone.make_aware(database_now, UTC)
    limit = settings.SF_DOCTOR_CLOCK_SKEW
    findings = []
    skew = abs(timezone.now() - database_now)
    if skew > limit:
        findings.append(_skew_finding("this process", skew))
    for worker in Worker.objects.filter(
        stopped_at__isnull=True, last_heartbeat_at__gt=database_now + limit
    ):
        findings.append(
            _skew_finding(f"worker {worker.hostname}", worker.last_heartbeat_at - database_now)
        )
    return findings


def _skew_finding(who: str, skew: timedelta) -> Finding:
    seconds = skew.total_seconds()
    severe = seconds * 2 >= settings.SF_WORKER_STALE_AFTER.total_seconds()
    return Finding(
        severity=Severity.ERROR if severe else Severity.WARNING,
        message=f"the clock of {who} is {seconds:.1f} s off the database's",
        evidence=[
            f"tolerated {settings.SF_DOCTOR_CLOCK_SKEW.total_seconds():g} s; workers are "
            f"taken for dead after {settings.SF_WORKER_STALE_AFTER.total_seconds():g} s"
        ],
    )


# --- runtime rows and units -----------------------------------------------------------


def _orphan_runtimes() -> list[TaskRuntime]:
    rows = TaskRuntime.objects.filter(last_heartbeat_at__lt=_stale_before()).exclude(
        task__units__status=UnitStatus.RUNNING
    )
    return list(rows.select_related("task__plan__session").order_by("pk"))


def _project_of(task: Task) -> int:
    return task.plan.session.project_id


def runtime_check() -> list[Finding]:
    return [
        Finding(
            severity=Severity.WARNING,
            message=f"task {r.task.key} has runtime state but no running unit",
            evidence=[
                f"worker {r.worker or '?'} pid {r.pid}, last heartbeat {r.last_heartbeat_at}"
            ],
            fixable=True,
            target=f"runtime of task {r.task_id}",
            project_id=_project_of(r.task),
        )
        for r in _orphan_runtimes()
    ]


def runtime_fix(actor: Actor) -> list[RepairDone]:
    done = []
    for row in _orphan_runtimes():
        deleted, _ = TaskRuntime.objects.filter(
            pk=row.pk, last_heartbeat_at=row.last_heartbeat_at
        ).delete()
        if deleted:
            done.append(
                RepairDone(
                    target=f"runtime of task {row.task_id}", action="deleted (no running unit)"
                )
            )
    return done


def units_check() -> list[Finding]:
    return [
        Finding(
            severity=Severity.WARNING,
            message=f"unit {u.attempt} of task {u.task.key} runs on a worker that is gone",
            evidence=[
                f"started {u.started_at:%Y-%m-%d %H:%M:%S}; no heartbeat since "
                f"{settings.SF_WORKER_STALE_AFTER.total_seconds():g} s"
            ],
            fixable=True,
            target=f"unit {u.pk}",
            project_id=_project_of(u.task),
        )
        for u in stale_units()
    ]


def units_fix(actor: Actor) -> list[RepairDone]:
    """The sweep's own recovery: crashed, and the task runs again (no retry spent)."""
    return [
        RepairDone(target=f"unit {u.pk}", action="recorded crashed; its task runs again")
        for u in stale_units()
        if unit_recover(unit=u, cause=f"worker lost (stale heartbeat; doctor, {actor})")
    ]


def _overdue_units() -> list[Unit]:
    limit = settings.SF_UNIT_HARD_TIMEOUT + settings.SF_WORKER_STALE_AFTER
    running = Unit.objects.filter(status=UnitStatus.RUNNING, started_at__lt=timezone.now() - limit)
    return list(running.select_related("task__plan__session").order_by("pk"))


def _orphan_tasks_count() -> int:
    left, unapproved = orphans_found()
    return left.count() + unapproved.count()


def stuck_check() -> list[Finding]:
    findings = [
        Finding(
            severity=Severity.WARNING,
            message=f"unit {u.attempt} of task {u.task.key} runs past the hard timeout",
            evidence=[
                f"started {u.started_at:%Y-%m-%d %H:%M:%S}",
                f"hard timeout {settings.SF_UNIT_HARD_TIMEOUT}",
            ],
            fixable=True,
            target=f"unit {u.pk}",
            project_id=_project_of(u.task),
        )
        for u in _overdue_units()
    ]
    orphans = _orphan_tasks_count()
    if orphans:
        findings.append(
            Finding(
                severity=Severity.WARNING,
                message=f"{orphans} tasks were left between two steps of a unit's end",
                evidence=["in progress with no unit running, or approved with no merge entry"],
                fixable=True,
                target="tasks between two steps",
            )
        )
    return findings


def stuck_fix(actor: Actor) -> list[RepairDone]:
    done = [
        RepairDone(target=f"unit {u.pk}", action="recorded crashed (past the hard timeout)")
        for u in _overdue_units()
        if unit_crashed(unit=u, cause=f"ran past the hard timeout (doctor, {actor})")
    ]
    moved = orphans_recover()
    if moved:
        done.append(RepairDone(target="tasks between two steps", action=f"{moved} moved on"))
    return done


# --- locks held by dead processes -----------------------------------------------------


def _dead_holders() -> list[TaskRuntime]:
    rows = TaskRuntime.objects.select_related("task__plan__session").order_by("pk")
    return [r for r in rows if local_host(r.worker) and not pid_alive(r.pid)]


def locks_check() -> list[Finding]:
    findings = [
        Finding(
            severity=Severity.WARNING,
            message=f"task {r.task.key} is held by {r.worker}, whose process {r.pid} is dead",
            evidence=[f"worktree {r.worktree_path}", f"last heartbeat {r.last_heartbeat_at}"],
            fixable=True,
            target=f"runtime of task {r.task_id}",
            project_id=_project_of(r.task),
        )
        for r in _dead_holders()
    ]
    return findings + doctor_git.git_locks_check()


def locks_fix(actor: Actor) -> list[RepairDone]:
    done: list[RepairDone] = []
    for row in _dead_holders():
        unit = Unit.objects.filter(task_id=row.task_id, status=UnitStatus.RUNNING).first()
        cause = f"its process {row.pid} on {row.worker} is dead (doctor, {actor})"
        if unit is not None and unit_crashed(unit=unit, cause=cause):
            done.append(RepairDone(target=f"unit {unit.pk}", action=f"recorded crashed: {cause}"))
        elif TaskRuntime.objects.filter(pk=row.pk).delete()[0]:
            done.append(RepairDone(target=f"runtime of task {row.task_id}", action="released"))
    return done + doctor_git.git_locks_fix(actor)


def register_checks() -> None:
    register(
        Check(
            id="workers.heartbeat",
            title="Workers and their heartbeats",
            run=workers_check,
            fix=workers_fix,
            cheap=True,
        ),
        Check(id="workers.clock", title="Clock skew", run=clock_check, cheap=True),
        Check(
            id="runtime.orphaned",
            title="Runtime rows without a live unit",
            run=runtime_check,
            fix=runtime_fix,
            cheap=True,
        ),
        Check(
            id="units.lost",
            title="Units whose worker is gone",
            run=units_check,
            fix=units_fix,
            cheap=True,
        ),
        Check(
            id="tasks.stuck",
            title="Tasks stuck past their timeouts",
            run=stuck_check,
            fix=stuck_fix,
        ),
        Check(
            id="locks.dead", title="Locks held by dead processes", run=locks_check, fix=locks_fix
        ),
        Check(
            id="worktrees.orphaned",
            title="Orphaned worktrees and sf/* branches",
            run=doctor_git.worktrees_check,
            fix=doctor_git.worktrees_fix,
        ),
    )
