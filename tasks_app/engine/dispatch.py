"""Dispatch: which units run next, on Celery workers or inline. The database is the
source of truth: the broker only carries task ids, and every delivery starts with a
conditional claim. ``sweep`` recovers what a dead worker or a lost message left.

Every driver goes through here: ``dispatch`` sends units to the Celery workers
(without a broker it drains in a thread), ``drain`` (its own module: it runs the
unit, which comes back here through ``dispatch_on_commit``) runs them inline
(headless, replay, that thread), and both ask ``next_units`` what run control allows
now.
"""

from __future__ import annotations

import logging
from datetime import datetime
from functools import partial
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from agents_app.axes import RunControl
from agents_app.models import AgentSession, SessionDriver, SessionStatus
from sf_core.actors import Actor
from sf_core.queues import WorkKind, queue_for
from tasks_app.engine import extensions
from tasks_app.engine.broker import FIRST, NEW, messages_lost, send_by_name
from tasks_app.engine.health import health_allows
from tasks_app.lifecycle import task_transition
from tasks_app.models import (
    ACTIVE_MERGE_STATUSES,
    ENGINE_HOLDS,
    MergeRequest,
    Plan,
    PlanStatus,
    ScheduleStatus,
    Task,
    TaskSchedule,
    TaskStatus,
    Unit,
)
from tasks_app.services import schedule_ready

logger = logging.getLogger("sf.dispatch")
IN_FLIGHT = (ScheduleStatus.CLAIMED, ScheduleStatus.DISPATCHED)
UNIT_RUN_TASK = "tasks_app.unit_run"  # the Celery task's registered name (tasks_app/tasks.py)
SESSION_DISPATCH_TASK = "tasks_app.session_dispatch"  # likewise


def runs(session: AgentSession) -> bool:
    """Active and not paused: the session may run units at all."""
    return session.status == SessionStatus.ACTIVE and not session.paused


def dispatchable(session: AgentSession) -> bool:
    """Runs, and its run control advances on its own (manual waits for a person)."""
    return runs(session) and session.run_control != RunControl.MANUAL


def worker_driven(session: AgentSession) -> bool:
    """Workers (and their sweeps) dispatch only sessions that are not run inline."""
    return session.driver == SessionDriver.WORKERS


def due_tasks(session_id: int) -> list[int]:
    """Runnable tasks of the session's accepted plans whose schedule is due, oldest first
    (a task backing off after system faults is due at its ``due_at``, not before)."""
    return list(
        _due(session_id)
        .filter(Q(due_at__isnull=True) | Q(due_at__lte=timezone.now()))
        .order_by("due_at", "task_id")
        .values_list("task_id", flat=True)
    )


def next_due_at(session_id: int) -> datetime | None:
    """When the session's next task backing off after system faults is due (None: none
    is), for an inline driver that would otherwise think nothing is left to run."""
    waiting = _due(session_id).filter(due_at__gt=timezone.now()).order_by("due_at")
    return waiting.values_list("due_at", flat=True).first()


def _due(session_id: int) -> QuerySet[TaskSchedule]:
    return TaskSchedule.objects.filter(
        status=ScheduleStatus.DUE,
        task__status__in=(TaskStatus.TODO, TaskStatus.RETRYING),
        task__plan__session_id=session_id,
        task__plan__status=PlanStatus.ACCEPTED,
    )


def next_units(session: AgentSession, *, step: bool = False) -> list[int]:
    """What run control allows now: autonomous runs every due task (a wave in
    parallel), assisted one unit at a time, manual none on its own.

    ``step`` is a person asking for exactly one unit now (``sf headless next``): the
    first due task, whatever the run control. A ``/next`` step (``step_requested``,
    through the workers) is one unit too, whatever the run control, but only once no
    unit of the session is in flight; the unit's end pauses the session."""
    one_step = step or session.step_requested
    if not (runs(session) if one_step else dispatchable(session)):
        return []
    if not health_allows(session):  # the pre-dispatch health gate (engine/health.py)
        return []
    slots = merge_slots(session.project_id)
    if not slots:
        return []
    _resume_engine_held(session)
    for plan in Plan.objects.filter(session=session, status=PlanStatus.ACCEPTED):
        schedule_ready(plan=plan)
    due = due_tasks(session.pk)[:slots]
    if step:
        return due[:1]
    if session.run_control == RunControl.ASSISTED or session.step_requested:
        busy = TaskSchedule.objects.filter(
            task__plan__session=session, status__in=IN_FLIGHT
        ).exists()
        return [] if busy else due[:1]
    return due


def merge_slots(project_id: int) -> int:
    """How many new units of the project may start: ``SF_MERGE_BACKLOG_LIMIT`` less the
    approved tasks waiting in its merge queue and its units in flight (each keeps its
    worktree until merged; ``sf_web/settings.py`` says why). The sweep dispatches
    again as merges drain it."""
    limit = settings.SF_MERGE_BACKLOG_LIMIT
    waiting = MergeRequest.objects.filter(project_id=project_id, status__in=ACTIVE_MERGE_STATUSES)
    # Units dispatched or running will wait there too: counted, so that the sessions of
    # one project dispatched one after the other (the sweep) share the slots.
    flying = TaskSchedule.objects.filter(
        task__plan__session__project_id=project_id, status__in=IN_FLIGHT
    )
    slots = max(0, limit - waiting[:limit].count() - flying[:limit].count())
    if not slots:
        logger.info("project %s: %s merges wait; no new unit until they drain", project_id, limit)
    return slots


def _resume_engine_held(session: AgentSession) -> None:
    """Tasks the engine paused because the session paused, stopped or ran out of budget
    go back to todo once it runs again; a task a person paused stays paused."""
    held = Task.objects.filter(
        plan__session=session, status=TaskStatus.PAUSED, hold_reason__in=ENGINE_HOLDS
    ).select_related("plan")
    for task in held:
        task_transition(
            task=task,
            to=TaskStatus.TODO,
            reason="session running again",
            actor=Actor.system("engine"),
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
        for start in extensions.inline_drain:  # ``drain.drain_in_background``
            start(session_id)
        return task_ids
    return _enqueue(task_ids)


def dispatch_on_commit(session_id: int) -> None:
    """Dispatch ``session_id`` once the current transaction commits (at once outside
    one, as ``transaction.on_commit`` does): how the engine itself says that a change
    it made (a unit's end, a review, a retry, a merge) may have made work runnable."""
    transaction.on_commit(partial(dispatch, session_id=session_id))


def on_session_runnable(
    sender: object, *, session_id: int, to_workers: bool = False, **_: Any
) -> None:
    """The ``session_runnable`` receiver: a layer below the engine (plan acceptance,
    the command service) committed a change that may make work runnable. A sender that
    does not wait for the answer (``to_workers``: a command typed in a page or sent to
    the API) has the dispatch itself run on a worker (``tasks_app.session_dispatch``,
    by name), so the request ends at once; without a broker, or when it cannot be
    reached, it runs here (and the units drain in a thread)."""
    if to_workers and not settings.CELERY_TASK_ALWAYS_EAGER:
        queue = queue_for(WorkKind.SHORT)
        if send_by_name(SESSION_DISPATCH_TASK, args=[session_id], queue=queue, priority=FIRST):
            return
    dispatch(session_id=session_id)


def _enqueue(task_ids: list[int]) -> list[int]:
    """Send task ids to the workers, except those sent already. Returns those sent.

    A message lost with the broker (a Redis restart) is sent again once it has waited
    ``SF_REDISPATCH_AFTER`` and the broker holds fewer messages than tasks wait for a
    worker (``broker.messages_lost``): a long queue is not a lost one. A duplicate is
    harmless, because the worker's claim is a conditional update that only one delivery
    wins. The task is sent by its name: the Celery interface (``tasks_app/tasks.py``)
    sits above the engine.
    """
    now = timezone.now()
    queue = settings.CELERY_TASK_DEFAULT_QUEUE  # read now: tests point it at their worker
    with transaction.atomic():
        due = TaskSchedule.objects.select_for_update(skip_locked=True).filter(
            task_id__in=task_ids, status=ScheduleStatus.DUE
        )
        sending = list(due.filter(enqueued_at__isnull=True).values_list("task_id", flat=True))
        waited = due.filter(enqueued_at__lt=now - settings.SF_REDISPATCH_AFTER)
        resend = list(waited.values_list("task_id", flat=True))
        if resend and messages_lost(queue):
            sending += resend
        TaskSchedule.objects.filter(task_id__in=sending).update(enqueued_at=now)
    ran_before = set(Unit.objects.filter(task_id__in=sending).values_list("task_id", flat=True))
    for task_id in sending:
        priority = FIRST if task_id in ran_before else NEW  # resumed work goes first
        transaction.on_commit(partial(_send, task_id, queue, now, priority))
    return sending


def _send(task_id: int, queue: str, enqueued_at: datetime, priority: int) -> None:
    """By name: the engine never imports the Celery interface module (tasks_app.tasks).
    Not sent (the broker down): marked unsent, so that the next sweep sends it."""
    if not send_by_name(UNIT_RUN_TASK, args=[task_id], queue=queue, priority=priority):
        TaskSchedule.objects.filter(task_id=task_id, enqueued_at=enqueued_at).update(
            enqueued_at=None
        )
