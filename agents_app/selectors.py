"""Read-side queries of the agents app."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.db.models import Count, Q, QuerySet

from agents_app.models import AgentSession, ModeTransition, Project, TransitionStatus
from sf_core.signals import collect, session_report_requested


def session_list(*, project: Project | None = None) -> QuerySet[AgentSession]:
    sessions = AgentSession.objects.select_related("project").annotate(
        pending_count=Count("transitions", filter=Q(transitions__status=TransitionStatus.PENDING))
    )
    return sessions.filter(project=project) if project is not None else sessions


def session_timeline(session: AgentSession, *, limit: int = 50) -> list[ModeTransition]:
    """Newest first; pending transitions included."""
    recent = session.transitions.select_related("actor_user").order_by("-requested_at", "-pk")
    return list(recent[:limit])


def session_pending(session: AgentSession) -> list[ModeTransition]:
    return list(session.transitions.filter(status=TransitionStatus.PENDING))


def budget_used_percent(spent: Decimal, budget: Decimal | None) -> float | None:
    if budget is None:
        return None
    if budget == 0:
        return 100.0 if spent > 0 else 0.0
    return round(float(spent / budget * 100), 1)


def session_report(session: AgentSession) -> dict[str, Any]:
    """Numbers for /status, /cost and /session-report (JSON-friendly).

    Apps built on this one add their fields through ``session_report_requested``
    (the tasks app adds ``tasks_summary``, the line /tasks shows)."""
    counts = session.transitions.aggregate(
        total=Count("pk"), pending=Count("pk", filter=Q(status=TransitionStatus.PENDING))
    )
    return {
        "session": session.pk,
        "status": session.status,
        "paused": session.paused,
        "axes": session.axes.as_dict(),
        "transitions": counts["total"],
        "pending_transitions": counts["pending"],
        "cost_spent": str(session.cost_spent),
        "cost_budget": None if session.cost_budget is None else str(session.cost_budget),
        "budget_used_percent": budget_used_percent(session.cost_spent, session.cost_budget),
        "autonomous_continues": session.autonomous_continues,
        "max_autonomous_continues": session.max_autonomous_continues,
        **collect(session_report_requested, sender=AgentSession, session=session),
    }
