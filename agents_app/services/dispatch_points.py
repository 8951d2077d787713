"""The engine's dispatch points, which steering scopes are due at each, and the reads
the engine makes there (a unit's every tool call: they must be cheap)."""

from __future__ import annotations

from enum import StrEnum

from django.db.models import Exists, OuterRef

from agents_app.models import AgentSession, ModeTransition, TransitionScope, TransitionStatus


class DispatchPoint(StrEnum):
    """Points in the engine's loop where pending steering may apply."""

    BEFORE_UNIT = "before-unit"
    BEFORE_TOOL = "before-tool"
    AFTER_TOOL = "after-tool"
    AFTER_UNIT = "after-unit"
    MILESTONE = "milestone"


# Which scopes are due at which point. No point is inside a tool call, so even `now`
# never mutates a call in flight; `after-current-unit` must wait for a unit boundary.
DUE_SCOPES: dict[DispatchPoint, frozenset[str]] = {
    DispatchPoint.BEFORE_TOOL: frozenset({"now", "after-current-tool"}),
    DispatchPoint.AFTER_TOOL: frozenset({"now", "after-current-tool"}),
    DispatchPoint.BEFORE_UNIT: frozenset({"now", "after-current-tool", "after-current-unit"}),
    DispatchPoint.AFTER_UNIT: frozenset({"now", "after-current-tool", "after-current-unit"}),
    DispatchPoint.MILESTONE: frozenset(TransitionScope.values),
}


def session_read(*, session_id: int, point: DispatchPoint) -> tuple[AgentSession, bool]:
    """The session with its project, and whether a transition is due at ``point``: one
    query, for the engine's dispatch points inside a unit (every tool call)."""
    due = ModeTransition.objects.filter(
        session_id=OuterRef("pk"),
        status=TransitionStatus.PENDING,
        requires_approval=False,
        scope__in=DUE_SCOPES[point],
    )
    session = (
        AgentSession.objects.select_related("project")
        .annotate(transition_due=Exists(due))
        .get(pk=session_id)
    )
    return session, bool(session.transition_due)


def session_has_due(*, session_id: int, point: DispatchPoint) -> bool:
    """Whether a pending transition of the session is due at ``point`` (no lock taken)."""
    return ModeTransition.objects.filter(
        session_id=session_id,
        status=TransitionStatus.PENDING,
        requires_approval=False,
        scope__in=DUE_SCOPES[point],
    ).exists()
