"""The pre-dispatch health gate (DESIGN §2, docs/doctor.md).

Before the engine schedules a session's units it asks the doctor's cheap checks
(cached per process for ``SF_DOCTOR_GATE_CACHE``). A check at error severity means SF
cannot dispatch safely: nothing is dispatched, and the session is asked to move to
repair through ``session_request_repair`` (the project's policy decides: auto, ask,
log-only; never under manual or assisted run control) — once per
``REPAIR_REQUEST_COOLDOWN``, not at every dispatch point.

A session in repair mode runs the deterministic fixes at each dispatch point
(``session_repair_run``); once the checks pass, a session the gate (or a person's
/repair) sent there returns to its previous axes and dispatch goes on. Until then a
session the gate sent there dispatches nothing; other repair sessions run their
units (a /doctor heal repair unit, with the repair tools only).
"""

from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from agents_app.axes import WorkMode
from agents_app.models import AgentSession, TransitionStatus
from agents_app.services import session_request_repair
from agents_app.services.repairs import GATE_ACTOR, entered_by_gate, session_repair_run
from sf_core.doctor import DoctorReport, gate_report

logger = logging.getLogger("sf.dispatch")
REPAIR_REQUEST_COOLDOWN = timedelta(minutes=10)


def health_allows(session: AgentSession) -> bool:
    """Whether the session's units may be dispatched now (see the module's docstring).
    ``session`` is refreshed when repair mode returned it to its previous axes."""
    if session.work_mode == WorkMode.REPAIR:
        run = session_repair_run(session=session)
        if run.restored is not None:
            session.refresh_from_db()
            return True
        # Repair units run (/doctor heal's; a session sent here by a failed task goes
        # on as before); a session the gate sent here waits until the checks pass.
        return run.report.healthy or not entered_by_gate(session)
    report = gate_report(max_age=settings.SF_DOCTOR_GATE_CACHE.total_seconds())
    if report.healthy:
        return True
    logger.warning(
        "session %s: dispatch held, health gate failing: %s", session.pk, gate_causes(report)
    )
    if not _asked_lately(session):
        session_request_repair(
            session=session,
            cause=f"pre-dispatch health gate failed: {gate_causes(report)}",
            actor=GATE_ACTOR,
        )
    return False


def gate_causes(report: DoctorReport) -> str:
    """The failing gate checks, one phrase each (for the transition and headless)."""
    return "; ".join(f"{c.id}: {c.findings[0].message}" for c in report.failing() if c.findings)


def _asked_lately(session: AgentSession) -> bool:
    """A repair request still pending, or one written within the cooldown (log-only
    writes a cancelled row each time: one per cooldown is enough evidence)."""
    entries = session.transitions.filter(
        to_work_mode=WorkMode.REPAIR,
        actor_kind=GATE_ACTOR.kind,
        actor_label=GATE_ACTOR.label,
    )
    recent = entries.filter(requested_at__gte=timezone.now() - REPAIR_REQUEST_COOLDOWN)
    return entries.filter(status=TransitionStatus.PENDING).exists() or recent.exists()
