"""The sweep: recover what a dead worker or a lost message left behind, then dispatch.

Run by every worker's heartbeat thread (and by headless for its own orphans); all of
it is conditional updates, so concurrent sweeps cannot double anything.
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from agents_app.axes import RunControl
from agents_app.models import AgentSession, SessionDriver, SessionStatus
from tasks_app.engine import extensions
from tasks_app.engine.dispatch import dispatch
from tasks_app.engine.merge_queue import merge_queue_resend
from tasks_app.engine.orphans import orphans_recover
from tasks_app.engine.outage import provider_resume_due
from tasks_app.engine.system_faults import unit_crashed
from tasks_app.models import Unit, UnitStatus

logger = logging.getLogger("sf.dispatch")


def engine_sweep() -> dict[str, int]:
    """Recover crashed units, the tasks a fault left between two steps, and lost
    dispatches of worker-driven sessions, resume the
    sessions a provider outage paused once their retry time has come, dispatch, send
    merge queues whose message was lost to the workers again, and run what features
    add to the sweep (``extensions.swept``: the reviews people gave on the forges)."""
    recovered = sum(unit_recover(unit=unit) for unit in stale_units())
    recovered += orphans_recover()  # tasks a fault left between two steps
    provider_resume_due(driver=SessionDriver.WORKERS)
    sessions = AgentSession.objects.filter(
        Q(run_control__in=(RunControl.AUTONOMOUS, RunControl.ASSISTED)) | Q(step_requested=True),
        status=SessionStatus.ACTIVE,
        paused=False,
        driver=SessionDriver.WORKERS,
    )
    dispatched = sum(len(dispatch(session_id=s.pk)) for s in sessions)
    merges = merge_queue_resend()
    done = {"recovered": recovered, "dispatched": dispatched, "merge_queues": merges}
    # What features add to the sweep (forge: the reviews given on the projects' forges).
    return done | {name: hook() for name, hook in extensions.swept.items()}


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
    """A unit whose worker died: mark it crashed and make the task runnable again
    (``system_faults``: no retry spent, a backoff after crashes in a row, failed after
    too many). The next unit gets a recovery briefing from the crashed unit's trace."""
    return unit_crashed(unit=unit, cause=cause)
