"""The board's totals that are not tasks: workers online and what waits for a person.

"approvals" on the board counts what the approvals page lists — tool calls the gate
asked a person about, still pending (``agents_app.gate.views.approvals_context``) — of
the board's session, or of the projects the person may view. It used to count mode
transitions awaiting approval instead, so a task blocked on a call said "approvals 0".
Those (a move to repair under the ``ask`` policy) are approved on the session page and
are counted apart. The board follows both live: the gate and a review broadcast to
``Groups.APPROVALS`` (``TaskBoardConsumer.approvals_changed``).
"""

from __future__ import annotations

from datetime import datetime
from typing import TypeVar

from django.conf import settings
from django.db.models import QuerySet

from agents_app.models import ModeTransition, Project, ReviewStatus, RiskDecision, TransitionStatus
from tasks_app.models import Worker

Waiting = TypeVar("Waiting", RiskDecision, ModeTransition)


def workers_online(now: datetime) -> int:
    cutoff = now - settings.SF_WORKER_STALE_AFTER
    return Worker.objects.filter(stopped_at__isnull=True, last_heartbeat_at__gte=cutoff).count()


def pending_approvals(session_id: int | None, projects: QuerySet[Project] | None) -> int:
    """Pending tool-call decisions, as the approvals page counts them."""
    pending = RiskDecision.objects.filter(review_status=ReviewStatus.PENDING)
    return _scoped(pending, session_id, projects).count()


def pending_mode_changes(session_id: int | None, projects: QuerySet[Project] | None) -> int:
    """Mode transitions waiting for a person's approval (the session page's steering)."""
    pending = ModeTransition.objects.filter(status=TransitionStatus.PENDING, requires_approval=True)
    return _scoped(pending, session_id, projects).count()


def _scoped(
    rows: QuerySet[Waiting], session_id: int | None, projects: QuerySet[Project] | None
) -> QuerySet[Waiting]:
    if session_id is not None:
        rows = rows.filter(session_id=session_id)
    if projects is not None:
        rows = rows.filter(session__project__in=projects)
    return rows
