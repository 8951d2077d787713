"""A unit's reservation of its session's budget: taken before it starts, grown while it
runs, settled when it ends on every path.

Before a unit starts, ``unit_reservation`` reserves an estimate (the project's
``budgets.unit_reserve_usd``, no more than the task's own remainder) under the session's
row lock: four units claimed at once against a budget that fits three reservations start
three; the fourth is held budget-paused and resumes at the next dispatch, once a unit
settled. A unit may spend its reservation and then asks for more (``budget_more``);
without any unreserved budget left it ends as out of budget. ``unit_settle`` gives the
reservation back (the actual cost is charged by ``outcome`` from what the unit spent);
it runs once per unit — the unit's own row is zeroed by a conditional update — whether
the unit completed, failed, raised, or crashed and was recovered by the sweep.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal

from django.db import transaction
from django.db.models import F

from agents_app.models import AgentSession
from agents_app.services.budget import reservation_release, reservation_take
from tasks_app.models import Task, Unit


def reservation_wanted(task: Task, session: AgentSession, held: Decimal = Decimal(0)) -> Decimal:
    """The estimate to reserve: the project's figure, within the task's own budget."""
    wanted = session.project.parsed_policy.budgets.unit_reserve_usd
    if task.cost_budget is not None:
        wanted = min(wanted, max(task.cost_budget - task.cost_spent - held, Decimal(0)))
    return wanted


def unit_reservation(task: Task, session: AgentSession) -> Decimal | None:
    """Reserve for a unit about to start; the caller holds the session's row lock.
    None: the budget cannot cover it while other units hold the rest.

    A best-of-N round reserves for all its N attempts at once (the project's figure
    each): ``round_shortfall`` has refused it first when the budget could never cover
    them, so this reserves all N or nothing."""
    if task.best_of > 1:
        wanted = session.project.parsed_policy.budgets.unit_reserve_usd * task.best_of
        if session.cost_budget is None:
            return Decimal(0)
        unreserved = session.cost_budget - session.cost_spent - session.cost_reserved
        return reservation_take(session=session, wanted=wanted) if unreserved >= wanted else None
    return reservation_take(session=session, wanted=reservation_wanted(task, session))


def round_shortfall(task: Task, session: AgentSession) -> str:
    """Why a best-of-N round can never start as things are ('' when it can, or when the
    task runs one attempt): N over the project's cap, or its N reservations together
    over what is left of the session's budget or of the task's own. Said, never run
    with fewer attempts."""
    n = task.best_of
    if n <= 1:
        return ""
    policy = session.project.parsed_policy
    if n > policy.best_of.cap:  # the policy was lowered after the plan was accepted
        return (
            f"best-of-{n} is over the project's cap of {policy.best_of.cap} attempts "
            "(policy best_of.cap): lower the task's best_of or raise the cap, then resume it"
        )
    each = policy.budgets.unit_reserve_usd
    needed = each * n
    lefts = []
    if session.cost_budget is not None:
        lefts.append(("the session", session.cost_budget - session.cost_spent))
    if task.cost_budget is not None:
        lefts.append((f"task {task.key}", task.cost_budget - task.cost_spent))
    for whose, left in lefts:
        if left < needed:
            return (
                f"best-of-{n} needs ${needed:.2f} reserved up front ({n} attempts x "
                f"${each:.2f}, budgets.unit_reserve_usd) but {whose} has ${left:.2f} left: "
                "raise the budget or lower best_of, then resume the task"
            )
    return ""


def unit_budget(task: Task, session: AgentSession, reserved: Decimal) -> Decimal | None:
    """What the unit may spend before asking for more: its reservation under a session
    budget, else the task's remainder, else no limit."""
    if session.cost_budget is not None:
        return reserved
    if task.cost_budget is not None:
        return max(task.cost_budget - task.cost_spent, Decimal(0))
    return None


def budget_more(task: Task, unit_id: int) -> Callable[[Decimal], Decimal | None]:
    """The loop's ``budget_more``: another reservation, while the session has some
    unreserved budget and the task some of its own. Returns the unit's new total."""

    def more(spent: Decimal) -> Decimal | None:
        with transaction.atomic():
            session = (
                AgentSession.objects.select_for_update()
                .select_related("project")
                .get(pk=task.plan.session_id)
            )
            if session.cost_budget is None:
                return None
            held = Unit.objects.values_list("cost_reserved", flat=True).get(pk=unit_id)
            current = Task.objects.get(pk=task.pk)
            wanted = reservation_wanted(current, session, held)
            if wanted <= 0:
                return None
            taken = reservation_take(session=session, wanted=wanted, own=held)
            if not taken:
                return None
            Unit.objects.filter(pk=unit_id).update(cost_reserved=F("cost_reserved") + taken)
            return held + taken

    return more


def unit_settle(*, unit_id: int, session_id: int) -> Decimal:
    """Release the unit's reservation, once. Returns what was released."""
    with transaction.atomic():
        held = (
            Unit.objects.select_for_update()
            .filter(pk=unit_id)
            .values_list("cost_reserved", flat=True)
            .first()
        )
        if not held:
            return Decimal(0)
        Unit.objects.filter(pk=unit_id).update(cost_reserved=Decimal(0))
        reservation_release(session_id=session_id, amount=held)
    return held
