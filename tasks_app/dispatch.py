"""Dispatch: which units run next, on Celery workers or inline, and the sweep that
recovers crashed units and lost messages. The database is the source of truth:
the broker only carries task ids, and every delivery starts with a conditional claim.
"""

from __future__ import annotations

import logging
import threading
from functools import partial

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from agents_app.models import AgentSession, SessionStatus
from tasks_app.lifecycle import task_transition
from tasks_app.models import (
    Plan,
    PlanStatus,
    ScheduleStatus,
    Task,
    TaskRuntime,
    TaskSchedule,
    TaskStatus,
    Unit,
    UnitStatus,
)
from tasks_app.services import schedule_ready

logger = logging.getLogger("sf.dispatch")
IN_FLIGHT = (ScheduleStatus.CLAIMED, ScheduleStatus.DISPATCHED)


def dispatchable(session: AgentSession) -> bool:
    return (
        session.status == SessionStatus.ACTIVE
        and not session.paused
        and session.run_control != "manual"
    )


def worker_driven(session: AgentSession) -> bool:
    """Workers (and their sweeps) dispatch only sessions that are not run inline."""
    return session.driver == "workers"


def due_tasks(session_id: int) -> list[int]:
    """Runnable tasks of the session's accepted plans whose schedule is due, oldest first."""
    return list(
        TaskSchedule.objects.filter(
            status=ScheduleStatus.DUE,
            task__status__in=(TaskStatus.TODO, TaskStatus.RETRYING),
            task__plan__session_id=session_id,
            task__plan__status=PlanStatus.ACCEPTED,
        )
        .order_by("due_at", "task_id")
        .values_list("task_id", flat=True)
    )


def next_units(session: AgentSession) -> list[int]:
    """What run control allows now: autonomous runs every due task (a wave in
    parallel), assisted one unit at a time, manual none on its own."""
    if not dispatchable(session):
        return []
    _resume_engine_paused(session)
    for plan in Plan.objects.filter(session=session, status=PlanStatus.ACCEPTED):
        schedule_ready(plan=plan)
    due = due_tasks(session.pk)
    if session.run_control == "assisted":
        busy = TaskSchedule.objects.filter(
            task__plan__session=session, status__in=IN_FLIGHT
        ).exists()
        return [] if busy else due[:1]
    return due


# Tasks the engine paused because the session paused, stopped or ran out of budget
# go back to todo once it runs again; a task a person paused stays paused.
ENGINE_PAUSE_REASONS = ("session paused", "stopped by /stop", "budget:", "session stopped")


def _resume_engine_paused(session: AgentSession) -> None:
    paused = Task.objects.filter(plan__session=session, status=TaskStatus.PAUSED).select_related(
        "plan"
    )
    for task in paused:
        if task.status_reason.startswith(ENGINE_PAUSE_REASONS):
            task_transition(
                task=task, to=TaskStatus.TODO, reason="session running again", actor="engine"
            )


def dispatch(*, session_id: int) -> list[int]:
    """Send the next units to the workers (after commit). Returns their task ids.

    Without a broker (the embedded default) they run inline in a background thread.
    """
    session = AgentSession.objects.get(pk=session_id)
    if not worker_driven(session):
        return []  # its inline driver (headless) runs the units itself
    task_ids = next_units(session)
    if not task_ids:
        return []
    if settings.CELERY_TASK_ALWAYS_EAGER:
        _drain_in_background(session_id)
        return task_ids
    return _enqueue(task_ids)


def _enqueue(task_ids: list[int]) -> list[int]:
    """Send task ids to the workers, except those sent recently. Returns those sent.

    A message lost with the broker (a Redis restart) is sent again after
    ``SF_REDISPATCH_AFTER``; a duplicate is harmless, because the worker's claim is a
    conditional update that only one delivery wins.
    """
    from tasks_app.tasks import unit_run_task

    now = timezone.now()
    resend_before = now - settings.SF_REDISPATCH_AFTER
    with transaction.atomic():
        unsent = TaskSchedule.objects.select_for_update(skip_locked=True).filter(
            Q(enqueued_at__isnull=True) | Q(enqueued_at__lt=resend_before),
            task_id__in=task_ids,
            status=ScheduleStatus.DUE,
        )
        sending = list(unsent.values_list("task_id", flat=True))
        TaskSchedule.objects.filter(task_id__in=sending).update(enqueued_at=now)
    queue = settings.CELERY_TASK_DEFAULT_QUEUE  # read now: tests point it at their worker
    for task_id in sending:
        transaction.on_commit(partial(unit_run_task.apply_async, args=[task_id], queue=queue))
    return sending


def drain(
    *, session_id: int, worker: str, options: object = None, stop: threading.Event | None = None
) -> int:
    """Run the session's units inline until nothing is dispatchable. Returns how many ran."""
    from tasks_app.engine import UnitOptions, unit_run

    ran = 0
    while not (stop and stop.is_set()):
        session = AgentSession.objects.get(pk=session_id)
        task_ids = next_units(session)
        if not task_ids:
            return ran
        chosen = options if isinstance(options, UnitOptions) else None
        report = unit_run(task_id=task_ids[0], worker=worker, options=chosen)
        ran += report is not None
        if report is None:
            return ran
    return ran


_DRAINING: set[int] = set()
_DRAIN_LOCK = threading.Lock()


def _drain_in_background(session_id: int) -> None:
    with _DRAIN_LOCK:
        if session_id in _DRAINING:
            return
        _DRAINING.add(session_id)

    def run() -> None:
        try:
            drain(session_id=session_id, worker=f"inline-{threading.get_ident()}")
        finally:
            with _DRAIN_LOCK:
                _DRAINING.discard(session_id)

    threading.Thread(target=run, name=f"sf-drain-{session_id}", daemon=True).start()


# --- the sweep ------------------------------------------------------------------------


def engine_sweep() -> dict[str, int]:
    """Recover what a dead worker or a lost message left behind, then dispatch.

    Run by every worker's heartbeat thread (and by headless); all of it is
    conditional updates, so concurrent sweeps cannot double anything.
    """
    recovered = sum(unit_recover(unit=unit) for unit in stale_units())
    sessions = AgentSession.objects.filter(
        status=SessionStatus.ACTIVE,
        paused=False,
        run_control__in=("autonomous", "assisted"),
        driver="workers",
    )
    dispatched = sum(len(dispatch(session_id=s.pk)) for s in sessions)
    return {"recovered": recovered, "dispatched": dispatched}


def stale_units() -> list[Unit]:
    cutoff = timezone.now() - settings.SF_WORKER_STALE_AFTER
    running = Unit.objects.filter(status=UnitStatus.RUNNING, task__plan__session__driver="workers")
    running = running.select_related("task__plan")
    stale_runtime = Q(task__runtime__last_heartbeat_at__lt=cutoff)
    no_runtime = Q(task__runtime__isnull=True, started_at__lt=cutoff)
    return list(running.filter(stale_runtime | no_runtime))


def unit_recover(*, unit: Unit, cause: str = "worker lost (stale heartbeat)") -> bool:
    """A unit whose worker died: mark it crashed and make the task runnable again.

    The next unit gets a recovery briefing from the crashed unit's trace. A crash is
    not the agent's failure, so it does not use up a retry.
    """
    with transaction.atomic():
        if (
            Unit.objects.filter(pk=unit.pk, status=UnitStatus.RUNNING).update(
                status=UnitStatus.CRASHED,
                finished_at=timezone.now(),
                summary=cause,
            )
            != 1
        ):
            return False
        task = Task.objects.select_related("plan").get(pk=unit.task_id)
        if task.status in (TaskStatus.IN_PROGRESS, TaskStatus.VERIFYING):
            task_transition(
                task=task, to=TaskStatus.RETRYING, reason="worker lost; recovering", actor="sweep"
            )
        TaskRuntime.objects.filter(task=task).delete()
        TaskSchedule.objects.filter(task=task, status__in=IN_FLIGHT).update(
            status=ScheduleStatus.DUE, due_at=timezone.now(), claimed_by="", enqueued_at=None
        )
        AgentSession.objects.filter(pk=task.plan.session_id).update(activity="idle")
    logger.warning("recovered task %s: unit %s lost its worker", task.key, unit.attempt)
    return True
