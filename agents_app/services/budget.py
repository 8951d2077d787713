"""Session budgets: charging cost, threshold warnings, the pause at 100 %, and the
reservations running units hold against the budget (so parallel units cannot overshoot
it together: each starts only with a share no other unit holds)."""

from __future__ import annotations

from decimal import Decimal

from django.db import transaction
from django.db.models import F, Value
from django.db.models.functions import Greatest
from django.urls import reverse

from agents_app.models import AgentSession, PauseCause, TraceKind
from agents_app.services import session_set_paused
from sf_core.actors import Actor
from sf_core.live import Groups, broadcast
from sf_core.notices import Notice, NoticeKind, notice_raise

THRESHOLDS = (75, 80, 90, 100)


def thresholds_crossed(spent: Decimal, budget: Decimal | None, fired: list[int]) -> list[int]:
    """The thresholds newly reached, in order (each fires once per session)."""
    if budget is None:
        return []
    used = Decimal(100) if budget == 0 else spent / budget * 100
    return [t for t in THRESHOLDS if used >= t and t not in fired]


def session_charge(*, session: AgentSession, cost: Decimal) -> list[int]:
    """Add ``cost`` to the session; record and return the thresholds it crossed.

    At 100 % the session pauses: continuing needs a person's explicit resume.
    """
    from agents_app.runtime.trace import TraceRecorder

    with transaction.atomic():
        AgentSession.objects.filter(pk=session.pk).update(cost_spent=F("cost_spent") + cost)
        locked = AgentSession.objects.select_for_update().get(pk=session.pk)
        crossed = thresholds_crossed(
            locked.cost_spent, locked.cost_budget, list(locked.budget_alerts)
        )
        if crossed:
            locked.budget_alerts = [*locked.budget_alerts, *crossed]
            locked.save(update_fields=["budget_alerts"])
            recorder = TraceRecorder(session=locked)
            for threshold in crossed:
                recorder.record(
                    TraceKind.NOTE,
                    name="budget",
                    payload={
                        "threshold": threshold,
                        "spent": str(locked.cost_spent),
                        "budget": str(locked.cost_budget),
                    },
                )
            broadcast(Groups.session(locked.pk), "session.changed")
            _notices(locked, crossed)
        if 100 in crossed:
            budget_pause(locked)
    session.refresh_from_db()
    return crossed


BUDGET_NOTICES = {80: NoticeKind.BUDGET_80, 100: NoticeKind.BUDGET_100}


def _notices(session: AgentSession, crossed: list[int]) -> None:
    """80 % and 100 % are worth a notification; each fires once per session."""
    for threshold in crossed:
        kind = BUDGET_NOTICES.get(threshold)
        if kind is None:
            continue
        notice_raise(
            Notice(
                kind=kind,
                dedupe_key=f"budget:{session.pk}:{threshold}",
                project_id=session.project_id,
                session_id=session.pk,
                text=(
                    f"session {session.pk} {session.title!r} spent ${session.cost_spent} "
                    f"of ${session.cost_budget} ({threshold} %)"
                ),
                url=reverse("session-detail", args=[session.pk]),
                payload={"threshold": threshold, "spent": str(session.cost_spent)},
            )
        )


def budget_remaining(session: AgentSession) -> Decimal | None:
    if session.cost_budget is None:
        return None
    return max(Decimal(0), session.cost_budget - session.cost_spent)


def budget_pause(session: AgentSession) -> None:
    """Pause at 100 %: only a person's explicit resume lets units run again."""
    spent, budget = session.cost_spent, session.cost_budget
    session_set_paused(
        session=session,
        paused=True,
        reason=f"budget reached: ${spent} of ${budget}; approve to continue",
        actor=Actor.system("budget"),
        cause=PauseCause.BUDGET,
    )


def reservation_take(
    *, session: AgentSession, wanted: Decimal, own: Decimal = Decimal(0)
) -> Decimal | None:
    """Reserve ``wanted`` of the session's unreserved budget; return what was reserved,
    or None when the budget cannot cover it now (other units hold the rest).

    The caller holds the session's row lock (``select_for_update``) and has read
    ``session`` under it: the check and the update are one step for every worker.
    ``own`` is what the caller already holds. When no other unit holds anything, the
    last of the budget is reserved even if it is less than wanted: nothing will free
    more, and refusing would leave the budget unspendable. No budget: nothing to hold.
    """
    if session.cost_budget is None:
        return Decimal(0)
    unreserved = session.cost_budget - session.cost_spent - session.cost_reserved
    others = session.cost_reserved - own
    if unreserved >= wanted:
        taken = wanted
    elif others <= 0 and unreserved > 0:
        taken = unreserved
    else:
        return None
    AgentSession.objects.filter(pk=session.pk).update(cost_reserved=F("cost_reserved") + taken)
    session.cost_reserved += taken
    return taken


def reservation_release(*, session_id: int, amount: Decimal) -> None:
    """Give back a settled unit's reservation. The caller releases once per unit (its
    own row is zeroed first); the floor at zero only guards against drift."""
    if amount <= 0:
        return
    AgentSession.objects.filter(pk=session_id).update(
        cost_reserved=Greatest(F("cost_reserved") - amount, Value(Decimal(0)))
    )
