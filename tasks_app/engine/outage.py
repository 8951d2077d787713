"""A provider outage re-queues the task; it does not fail it.

When the model provider stays down (5xx, lost connections, timeouts) or keeps rate
limiting past the router's waits and fallback (``ProviderOutage``), the unit ends as
*provider unavailable*, its task goes back to ``retrying`` without spending one of its
``max_retries``, and the session pauses with ``PauseCause.PROVIDER`` until
``AgentSession.provider_retry_at``: 30 s after the first outage in a row, then 60 s,
120 s, … at most 10 min. No thread sleeps: the sweep (``provider_resume_due``) lifts
the pause when it is due and dispatches, and headless waits for it itself. A pause
for refused credentials (``ProviderAuthError``) has no retry time: a person lifts it.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone

from agents_app.models import AgentSession, PauseCause
from agents_app.services import session_set_paused
from sf_core.actors import Actor
from tasks_app.lifecycle import task_transition
from tasks_app.models import Task, TaskStatus, Unit, UnitStatus

PROVIDER = Actor.system("provider")
FIRST_WAIT = 30.0  # seconds after the first outage in a row
MAX_WAIT = 600.0
UNAVAILABLE = "provider unavailable"  # how the unit's summary starts


def provider_backoff(outages: int) -> timedelta:
    """The wait after ``outages`` outages in a row: 30 s, 60 s, … capped at 10 min."""
    seconds = FIRST_WAIT * 2 ** max(0, outages - 1)
    return timedelta(seconds=min(seconds, MAX_WAIT))


def provider_outage(*, task: Task, unit: Unit, reason: str) -> datetime:
    """End ``unit`` as provider unavailable, put its task back (no retry spent) and pause
    the session until the backoff is over. Returns when the sweep resumes it."""
    Unit.objects.filter(pk=unit.pk).update(
        status=UnitStatus.CANCELLED,
        summary=f"{UNAVAILABLE}: {reason}"[:20_000],
        finished_at=timezone.now(),
    )
    task.refresh_from_db()
    if task.status in (TaskStatus.IN_PROGRESS, TaskStatus.VERIFYING):
        task_transition(
            task=task,
            to=TaskStatus.RETRYING,
            reason=f"{UNAVAILABLE}; the task runs again when the provider is back "
            f"(no retry spent): {reason}",
            actor=PROVIDER,
        )
    with transaction.atomic():
        session = AgentSession.objects.select_for_update().get(pk=task.plan.session_id)
        now = timezone.now()
        waiting = provider_waiting(session)
        if waiting is not None and waiting > now:
            return waiting  # another unit of the wave met the same outage: one pause
        outages = session.provider_outages + 1
        retry_at = now + provider_backoff(outages)
        AgentSession.objects.filter(pk=session.pk).update(
            provider_outages=outages, provider_retry_at=retry_at
        )
        session_set_paused(
            session=session,
            paused=True,
            reason=f"{UNAVAILABLE}; trying again at {retry_at:%H:%M:%S} UTC: {reason}"[:500],
            actor=PROVIDER,
            cause=PauseCause.PROVIDER,
        )
    return retry_at


def provider_recovered(*, session_id: int) -> None:
    """A unit reached the model: the next outage starts the backoff again at 30 s."""
    AgentSession.objects.filter(pk=session_id, provider_outages__gt=0).update(provider_outages=0)


def provider_waiting(session: AgentSession) -> datetime | None:
    """When a session paused by a provider outage runs again (None: not such a pause)."""
    if session.paused and session.pause_cause == PauseCause.PROVIDER:
        return session.provider_retry_at
    return None


def provider_resume(*, session_id: int, now: datetime | None = None) -> bool:
    """Lift the session's provider pause if its retry time has come. True if lifted."""
    now = now or timezone.now()
    with transaction.atomic():
        session = AgentSession.objects.select_for_update().get(pk=session_id)
        due = provider_waiting(session)
        if due is None or due > now:
            return False
        AgentSession.objects.filter(pk=session.pk).update(provider_retry_at=None)
        session_set_paused(
            session=session,
            paused=False,
            reason="trying the model provider again after an outage",
            actor=PROVIDER,
        )
    return True


def provider_resume_due(*, driver: str | None = None) -> list[int]:
    """Lift every provider pause whose time has come (of ``driver``'s sessions).
    Returns the sessions resumed."""
    paused = AgentSession.objects.filter(
        paused=True, pause_cause=PauseCause.PROVIDER, provider_retry_at__lte=timezone.now()
    )
    if driver is not None:
        paused = paused.filter(driver=driver)
    return [pk for pk in paused.values_list("pk", flat=True) if provider_resume(session_id=pk)]
