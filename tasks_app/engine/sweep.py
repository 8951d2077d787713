"""The sweep: recover what a dead worker or a lost message left behind, then dispatch.

Run by every worker's heartbeat thread (and by headless for its own orphans); all of
it is conditional updates, so concurrent sweeps cannot double anything.
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from agents_app.axes import RunControl
from agents_app.models import Activity, AgentSession, SessionDriver, SessionStatus
from sf_core.actors import Actor
from tasks_app.engine.dispatch import IN_FLIGHT, dispatch
from tasks_app.engine.merge_queue import merge_queue_resend
from tasks_app.engine.outage import provider_resume_due
from tasks_app.engine.outcome import charge_from_ledger
from tasks_app.forge import forge_sync
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

logger = logging.getLogger("sf.dispatch")


def engine_sweep() -> dict[str, int]:
    """Recover crashed units and lost dispatches of worker-driven sessions, resume the
    sessions a provider outage paused once their retry time has come, dispatch, send
    merge queues whose message was lost to the workers again, and apply the reviews
    people gave on the projects' forges."""
    recovered = sum(unit_recover(unit=unit) for unit in stale_units())
    provider_resume_due(driver=SessionDriver.WORKERS)
    sessions = AgentSession.objects.filter(
        Q(run_control__in=(RunControl.AUTONOMOUS, RunControl.ASSISTED)) | Q(step_requested=True),
        status=SessionStatus.ACTIVE,
        paused=False,
        driver=SessionDriver.WORKERS,
    )
    dispatched = sum(len(dispatch(session_id=s.pk)) for s in sessions)
    merges = merge_queue_resend()
    reviewed = forge_sync()  # reviews given on the projects' forges
    return {
        "recovered": recovered,
        "dispatched": dispatched,
        "merge_queues": merges,
        "forge_reviews": reviewed,
    }


def stale_units() -> list[Unit]:
    cutoff = timezone.now() - settings.SF_WORKER_STALE_AFTER
    running = Unit.objects.filter(
        status=UnitStatus.RUNNING, task__plan__session__driver=SessionDriver.WORKERS
    )
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
                task=task,
                to=TaskStatus.RETRYING,
                reason="worker lost; recovering",
                actor=Actor.system("sweep"),
            )
        TaskRuntime.objects.filter(task=task).delete()
        TaskSchedule.objects.filter(task=task, status__in=IN_FLIGHT).update(
            status=ScheduleStatus.DUE, due_at=timezone.now(), claimed_by="", enqueued_at=None
        )
        AgentSession.objects.filter(pk=task.plan.session_id).update(activity=Activity.IDLE)
        # What the lost unit spent is charged from the ledger; its reservation is freed.
        charge_from_ledger(task, unit)
    logger.warning("recovered task %s: unit %s lost its worker", task.key, unit.attempt)
    return True
