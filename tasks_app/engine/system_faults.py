"""Faults of the system, not of the agent or its task: the worker lost (``kill -9``,
the OOM killer), the database connection terminated, the disk full, git failing
under SF (a lock, a full disk). None of them is the agent's failure.

The unit is recorded as crashed and its task runs again without spending one of its
``max_retries``; the next unit gets a recovery briefing from the crashed one's trace.
The wait before it grows with the crashes in a row (none after the first, then 5 s,
10 s, … at most ``MAX_BACKOFF``), so a fault that lasts (a disk that stays full) does
not spin the whole queue through in seconds; after ``SYSTEM_FAULT_LIMIT`` in a row the
task fails with the last fault's words, and a person retries it when the cause is
gone. Every step is a conditional update: the sweep, a unit that met the fault
itself, and headless recovering its own orphans cannot double anything.
"""

from __future__ import annotations

import logging
import time
from datetime import timedelta

from django.db import DatabaseError, connection, transaction
from django.utils import timezone

from agents_app.models import Activity, AgentSession
from sf_core.actors import Actor
from tasks_app.engine.dispatch import dispatch_on_commit
from tasks_app.engine.outcome import charge_from_ledger
from tasks_app.engine.values import SYSTEM_FAULTS, UnitReport
from tasks_app.lifecycle import task_transition
from tasks_app.models import (
    ScheduleStatus,
    Task,
    TaskRuntime,
    TaskSchedule,
    TaskStatus,
    Unit,
    UnitStatus,
)

logger = logging.getLogger("sf.engine")
__all__ = ["SYSTEM_FAULTS", "unit_crashed", "unit_system_fault"]
SYSTEM_FAULT_LIMIT = 8  # crashes of one task in a row: then it fails, for a person
FIRST_BACKOFF = 5.0
MAX_BACKOFF = 300.0
RUNNING_AGAIN = (TaskStatus.IN_PROGRESS, TaskStatus.VERIFYING)
# A database that is restarting: try to record the crash this often before leaving it
# to the sweep (which finds the unit by its stale heartbeat).
RECORD_WAITS = (0.0, 1.0, 2.0, 4.0)


def system_fault_backoff(crashes: int) -> timedelta:
    """The wait after ``crashes`` crashes in a row: 0 after the first, then 5 s, 10 s, …"""
    if crashes <= 1:
        return timedelta(0)
    return timedelta(seconds=min(FIRST_BACKOFF * 2 ** (crashes - 2), MAX_BACKOFF))


def unit_crashed(*, unit: Unit, cause: str) -> bool:
    """Record ``unit`` as crashed for ``cause`` and make its task runnable again (after
    the backoff), or fail it after ``SYSTEM_FAULT_LIMIT`` crashes in a row. False if
    the unit was no longer running (someone recorded its end first)."""
    with transaction.atomic():
        ended = Unit.objects.filter(pk=unit.pk, status=UnitStatus.RUNNING).update(
            status=UnitStatus.CRASHED, finished_at=timezone.now(), summary=cause[:20_000]
        )
        if ended != 1:
            return False
        task = Task.objects.select_related("plan").get(pk=unit.task_id)
        crashes = crashes_in_a_row(task)
        if task.status in RUNNING_AGAIN:
            _task_after_crash(task, crashes, cause)
        TaskRuntime.objects.filter(task=task).delete()
        runnable = task.status in (TaskStatus.TODO, TaskStatus.RETRYING)
        TaskSchedule.objects.filter(task=task).update(
            status=ScheduleStatus.DUE if runnable else ScheduleStatus.CONSUMED,
            due_at=timezone.now() + system_fault_backoff(crashes),
            claimed_by="",
            enqueued_at=None,
        )
        AgentSession.objects.filter(pk=task.plan.session_id).update(activity=Activity.IDLE)
        # What the lost unit spent is charged from the ledger; its reservation is freed.
        charge_from_ledger(task, unit)
        dispatch_on_commit(task.plan.session_id)
    logger.warning("task %s: unit %s crashed (%s)", task.key, unit.attempt, cause[:300])
    return True


def crashes_in_a_row(task: Task) -> int:
    """How many of the task's latest units crashed, counting back from the last."""
    latest = Unit.objects.filter(task=task).order_by("-attempt")
    count = 0
    for status in latest.values_list("status", flat=True)[:SYSTEM_FAULT_LIMIT]:
        if status != UnitStatus.CRASHED:
            break
        count += 1
    return count


def _task_after_crash(task: Task, crashes: int, cause: str) -> None:
    actor = Actor.system("recovery")
    if crashes >= SYSTEM_FAULT_LIMIT:
        reason = f"{crashes} system faults in a row (no retry spent on them); the last: {cause}"
        task_transition(task=task, to=TaskStatus.FAILED, reason=reason[:2000], actor=actor)
        return
    wait = system_fault_backoff(crashes).total_seconds()
    then = f"in {wait:g} s" if wait else "now"
    reason = f"{cause}; running again {then} (no retry spent)"
    task_transition(task=task, to=TaskStatus.RETRYING, reason=reason[:2000], actor=actor)


def unit_system_fault(*, task: Task, unit: Unit, error: BaseException) -> UnitReport | None:
    """The unit met a system fault itself (``SYSTEM_FAULTS``): record the crash on a
    fresh database connection, waiting out a database that is restarting. None when
    even that failed (the sweep recovers the unit by its stale heartbeat)."""
    cause = f"system fault: {type(error).__name__}: {error}".strip()
    logger.warning("unit %s of %s: %s", unit.attempt, task.key, cause[:500])
    lost = isinstance(error, DatabaseError)
    for wait in RECORD_WAITS:
        time.sleep(wait)
        if lost:  # a terminated connection stays unusable; the next query reconnects
            connection.close()
        try:
            unit_crashed(unit=unit, cause=cause)
            status = Task.objects.values_list("status", flat=True).get(pk=task.pk)
        except DatabaseError:
            lost = True
            continue
        return UnitReport(task.pk, unit.pk, unit.attempt, "system_fault", status, cause)
    logger.error(
        "unit %s of %s: could not record its crash; the sweep will", unit.attempt, task.key
    )
    return None
