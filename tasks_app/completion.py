"""When the work of a plan, and then of its session, has ended — and how it re-opens.

The rules (``plan_outcome`` is the pure part):

- An accepted plan is still running while any of its tasks can still move: todo,
  in progress, verifying, retrying, in review, paused, or blocked for anything but a
  dependency that ended the wrong way (a person can still act on such a task: approve a
  decision, answer a question, resolve a merge).
- Once nothing can move, the plan is **failed** if any task failed (no retries left),
  otherwise **cancelled** if any task was cancelled or waits on a dependency that can
  never hold, otherwise **done** (every task done or skipped).
- A session none of whose plans is still accepted becomes **failed** if the plan that
  just finished failed, otherwise **completed** (``agents_app.services.session_finish``):
  nothing more is dispatched and its badge stops pulsing.
- A person's retry re-opens both (``plan_reopen``): the plan is accepted again and the
  session active again, with the axes it had, so the run carries on as before.

Every change is logged (the plan's ``status_reason``, the session's transition log and
the ``sf.completion`` logger) and broadcast on commit to the session page and boards.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from django.db import transaction
from django.utils import timezone

from agents_app.models import AgentSession, SessionStatus
from agents_app.services import session_finish, session_reopen
from sf_core.actors import SF, Actor
from tasks_app.models import FINISHED_PLAN_STATUSES, HoldReason, Plan, PlanStatus, TaskStatus
from tasks_app.services import plans_changed, schedule_ready

logger = logging.getLogger("sf.completion")
S = TaskStatus
ENDED = frozenset({S.DONE, S.SKIPPED, S.FAILED, S.CANCELLED})


def plan_outcome(tasks: Iterable[tuple[str, str]]) -> str | None:
    """The finished status of a plan whose tasks have these ``(status, hold_reason)``,
    or None while any of them can still move."""
    statuses: set[str] = set()
    for status, hold in tasks:
        stuck_on_dependency = status == S.BLOCKED and hold == HoldReason.DEPENDENCY
        if status not in ENDED and not stuck_on_dependency:
            return None
        statuses.add("dependency" if stuck_on_dependency else status)
    if S.FAILED in statuses:
        return PlanStatus.FAILED
    if statuses & {S.CANCELLED, "dependency"}:
        return PlanStatus.CANCELLED
    return PlanStatus.DONE


def plan_settle(*, plan_id: int, actor: Actor = SF) -> str | None:
    """Finish an accepted plan whose work has ended, and its session when no accepted
    plan is left. Returns the plan's new status, or None when it is still running.

    Ready tasks are scheduled first, so a dependent that can never run is blocked
    (and counted as such) before the plan is judged. Idempotent: a conditional update."""
    with transaction.atomic():
        plan = _lock(plan_id)
        if plan.status != PlanStatus.ACCEPTED:
            return None
        schedule_ready(plan=plan)
        outcome = plan_outcome(plan.tasks.values_list("status", "hold_reason"))
        if outcome is None:
            return None
        counts = _counts(plan)
        Plan.objects.filter(pk=plan.pk, status=PlanStatus.ACCEPTED).update(
            status=outcome, status_reason=f"{outcome}: {counts}", finished_at=timezone.now()
        )
        logger.info("plan %s %s (%s)", plan.pk, outcome, counts)
        plans_changed(session_id=plan.session_id)
        _session_settle(plan, outcome, actor)
    return outcome


def _lock(plan_id: int) -> Plan:
    """Lock the session, then the plan: the order a unit's outcome takes them in (it
    holds the session when it settles), so two settles never wait on each other."""
    session_id = Plan.objects.values_list("session_id", flat=True).get(pk=plan_id)
    AgentSession.objects.select_for_update().filter(pk=session_id).first()
    return Plan.objects.select_for_update().get(pk=plan_id)


def _counts(plan: Plan) -> str:
    statuses = list(plan.tasks.values_list("status", flat=True))
    return ", ".join(f"{statuses.count(s)} {s}" for s in sorted(set(statuses)))


def _session_settle(plan: Plan, outcome: str, actor: Actor) -> None:
    if Plan.objects.filter(session_id=plan.session_id, status=PlanStatus.ACCEPTED).exists():
        return
    status = SessionStatus.FAILED if outcome == PlanStatus.FAILED else SessionStatus.COMPLETED
    session = AgentSession.objects.get(pk=plan.session_id)
    if session_finish(
        session=session, status=status, reason=f"plan {plan.pk} {outcome}", actor=actor
    ):
        logger.info("session %s %s after plan %s", session.pk, status, plan.pk)


def plan_reopen(*, plan: Plan, reason: str, actor: Actor) -> bool:
    """A finished plan is accepted again, and its session active again (a retry).
    True if the plan was finished."""
    with transaction.atomic():
        _lock(plan.pk)
        reopened = Plan.objects.filter(pk=plan.pk, status__in=FINISHED_PLAN_STATUSES).update(
            status=PlanStatus.ACCEPTED, status_reason=f"re-opened: {reason}", finished_at=None
        )
        session = AgentSession.objects.get(pk=plan.session_id)
        session_reopen(session=session, reason=reason, actor=actor)
        if reopened:
            logger.info("plan %s re-opened: %s", plan.pk, reason)
            plans_changed(session_id=plan.session_id)
    plan.refresh_from_db()
    return bool(reopened)
