"""The engine's dispatch points, which steering scopes are due at each, and the reads
the engine makes there (a unit's every tool call: they must be cheap)."""

from __future__ import annotations

import functools
from enum import StrEnum

from django.db.models import Exists, OuterRef, QuerySet

from agents_app.models import (
    AgentSession,
    ApprovalRule,
    ModeTransition,
    ReviewScope,
    ReviewStatus,
    RiskDecision,
    TransitionScope,
    TransitionStatus,
)


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
    query, for the engine's dispatch points inside a unit (every tool call).

    It also says whether the gate has anything to look up for the call that follows
    (``gate_approvals``: an unused once-approval of the session, an approval rule of
    the project or the session), so that the gate, deciding on this reading, asks the
    database only when there is (``agents_app.gate.session``): two queries a call
    fewer, nearly always.

    Its ``dispatch_version`` lets a unit's later calls reuse this reading: the gate's
    one write checks that it is still current (``reading_current``).
    """
    session = _reading(point).get(pk=session_id)
    due = session.transition_due  # type: ignore[attr-defined]  # _reading annotates it
    return session, bool(due)


@functools.cache
def _reading(point: DispatchPoint) -> QuerySet[AgentSession]:
    """``session_read``'s query, built once per point (building it, subqueries and all,
    cost as much CPU as running it); each ``get`` clones it."""
    due = ModeTransition.objects.filter(
        session_id=OuterRef("pk"),
        status=TransitionStatus.PENDING,
        requires_approval=False,
        scope__in=DUE_SCOPES[point],
    )
    once = RiskDecision.objects.filter(
        session_id=OuterRef("pk"),
        review_status=ReviewStatus.APPROVED,
        review_scope=ReviewScope.ONCE,
        used_at__isnull=True,
    )
    rules = ApprovalRule.objects.filter(project_id=OuterRef("project_id"))
    return AgentSession.objects.select_related("project").annotate(
        transition_due=Exists(due),
        gate_approvals=Exists(once) | Exists(rules),
    )


def session_has_due(*, session_id: int, point: DispatchPoint) -> bool:
    """Whether a pending transition of the session is due at ``point`` (no lock taken)."""
    return ModeTransition.objects.filter(
        session_id=session_id,
        status=TransitionStatus.PENDING,
        requires_approval=False,
        scope__in=DUE_SCOPES[point],
    ).exists()
