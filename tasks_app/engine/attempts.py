"""Best-of-N: one round of N attempts at a task, run at once, verified, ranked, the best
kept (docs/best-of-n.md).

``unit.unit_run`` hands a task with ``best_of`` N > 1 here once it has claimed it and
reserved the budget of all N attempts (``reservations.unit_reservation``; a budget that
could never cover them failed the task with the figures: ``round_shortfall``). The
round's first unit is the one ``unit_run`` created; this adds the others, shares the
reservation out, and runs each attempt with its own variant (``BestOfPolicy.variant``),
its own worktree and branch (``attempt_workspace``, off the task's branch), its own
trace, cost and verification — in threads when the rows they need are committed (a
caller's open transaction could not be seen from another connection: then one after the
other). The ranking (``tasks_app.ranking``) chooses; the winner's commit becomes the
task's checkpoint and goes on through review and the merge queue as a single unit's
would (``attempt_choice.attempt_keep``); the others stay for comparison and a person's
pick (``attempt_choice.attempt_pick``). No attempt passed: the round is one spent
retry, as a single unit's failed verification is.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from decimal import ROUND_DOWN, Decimal
from functools import partial

from django.db import connection, connections, transaction
from django.utils import timezone

from agents_app.gate.redaction import redact_text
from agents_app.runtime.loop import LoopResult, Outcome
from sf_core.errors import SfError
from tasks_app.engine import extensions
from tasks_app.engine.attempt_choice import attempt_keep, attempt_workspace, attempts_tidy
from tasks_app.engine.environment import worktree_prepare
from tasks_app.engine.hooks import EngineHooks, StopCause
from tasks_app.engine.outcome import (
    HELD_BY_CAUSE,
    _charge,
    _end_unit,
    _next,
    _person_stopped,
    _retry_or_fail,
    charge_from_ledger,
)
from tasks_app.engine.review import review_start
from tasks_app.engine.stopping import StopRequest, StopWatch, stop_read
from tasks_app.engine.values import SYSTEM_FAULTS, UnitOptions, UnitReport
from tasks_app.engine.verification import verify
from tasks_app.engine.worktrees import checkpoint_commit, checkpoint_patch, worktree_ensure
from tasks_app.lifecycle import task_transition
from tasks_app.models import AttemptRound, Task, TaskStatus, Unit, UnitStatus
from tasks_app.ranking import Candidate, choice_reason, patch_changed_lines, rank
from tasks_app.workspaces import Workspace

logger = logging.getLogger("sf.engine")
# What ends one attempt with its reason, the round going on: SF's errors (a replay
# miss, a provider's refusal, a tampered worktree) and the system's faults.
ENDS_AN_ATTEMPT: tuple[type[BaseException], ...] = (SfError, *SYSTEM_FAULTS)
Agent = Callable[[Task, Unit, Workspace, UnitOptions, EngineHooks, dict[str, str]], LoopResult]


@dataclass
class RoundState:
    """What the round's attempts leave for its close: why the hooks stopped each, and
    the verdict on each verified one (``extensions.attempt_verdicts``: a model review)."""

    causes: dict[int, StopCause] = field(default_factory=dict)
    verdicts: dict[int, str | None] = field(default_factory=dict)


def round_run(
    *, task: Task, first: Unit, ws: Workspace, options: UnitOptions, agent: Agent, watch: StopWatch
) -> UnitReport:
    """Run the round of ``task`` whose first unit is ``first``, and settle it."""
    round_, units = _round_open(task, first)
    state = RoundState()
    try:
        _run_all(task, units, ws, options, agent, watch, state)
    finally:
        for unit in units:  # an attempt that raised past its own handling: ended here
            if Unit.objects.filter(pk=unit.pk, status=UnitStatus.RUNNING).exists():
                charge_from_ledger(task, unit)
                _end_unit(unit, UnitStatus.FAILED, summary="the attempt did not finish")
    return _round_close(task, round_, ws, options, watch, state)


def _round_open(task: Task, first: Unit) -> tuple[AttemptRound, list[Unit]]:
    """The round's row and its N units, the first's reservation shared among them."""
    n = task.best_of
    best_of = task.plan.session.project.parsed_policy.best_of
    variants = [best_of.variant(i).model_dump(exclude_none=True) for i in range(n)]
    with transaction.atomic():
        held = Unit.objects.select_for_update().values_list("cost_reserved", flat=True)
        total = held.get(pk=first.pk)
        each = (total / n).quantize(Decimal("0.000001"), rounding=ROUND_DOWN)
        round_ = AttemptRound.objects.create(task=task, size=n)
        Unit.objects.filter(pk=first.pk).update(
            round=round_, variant=variants[0], cost_reserved=total - each * (n - 1)
        )
        others = [
            Unit.objects.create(
                task=task,
                attempt=first.attempt + index,
                round=round_,
                variant=variants[index],
                cost_reserved=each,
            )
            for index in range(1, n)
        ]
    first.refresh_from_db()
    return round_, [first, *others]


def _run_all(
    task: Task,
    units: list[Unit],
    ws: Workspace,
    options: UnitOptions,
    agent: Agent,
    watch: StopWatch,
    state: RoundState,
) -> None:
    """Every attempt, at once in threads; one after the other inside a caller's open
    transaction, whose rows another thread's connection could not see."""
    each = [partial(_attempt, task, unit, ws, options, agent, watch, state) for unit in units]
    if connection.in_atomic_block:
        for attempt in each:
            attempt()
        return
    with ThreadPoolExecutor(max_workers=len(units), thread_name_prefix="sf-attempt") as pool:
        for done in [pool.submit(_in_thread, attempt) for attempt in each]:
            done.result()


def _in_thread(attempt: Callable[[], None]) -> None:
    try:
        attempt()
    finally:
        connections.close_all()  # this thread's connections, not the worker's


def _attempt(
    task: Task,
    unit: Unit,
    ws: Workspace,
    options: UnitOptions,
    agent: Agent,
    watch: StopWatch,
    state: RoundState,
) -> None:
    """One attempt: its worktree, its agent with its variant, its checkpoint, its
    charge and its verification. Whatever goes wrong ends this attempt only."""
    # Its own instance: the threads share nothing they could cache into.
    task = Task.objects.select_related("plan__session__project").get(pk=task.pk)
    aws = attempt_workspace(ws, task, unit)
    variant = unit.variant or {}
    chosen = replace(
        options,
        model=variant.get("model") or options.model,
        model_mode=variant.get("model_mode"),
        temperature=variant.get("temperature"),
    )
    hooks = EngineHooks(session_id=task.plan.session_id, task=task, watch=watch)
    try:
        worktree_ensure(aws)
        blocked, resources = worktree_prepare(task=task, unit=unit, ws=aws)
        result = blocked or agent(task, unit, aws, chosen, hooks, resources)
        if hooks.cause is not None:
            state.causes[unit.pk] = hooks.cause
        if _attempt_end(task, unit, aws, result, resources):
            # Its review, in its own worktree and thread: the reviews run at once too,
            # and their cost is the attempt's (the ranking's cost counts it).
            state.verdicts[unit.pk] = extensions.attempt_verdict_run(task, unit, aws, options)
    except ENDS_AN_ATTEMPT as exc:
        logger.warning("attempt %s of %s failed: %s", unit.attempt, task.key, exc)
        charge_from_ledger(task, unit)
        _end_unit(unit, UnitStatus.FAILED, summary=f"the attempt failed: {exc}")


def _attempt_end(
    task: Task, unit: Unit, aws: Workspace, result: LoopResult, resources: dict[str, str]
) -> bool:
    """Its checkpoint, charge and verification; whether it may be kept (it passed and
    changed something: what a review is worth spending on)."""
    commit = checkpoint_commit(aws, f"sf({task.key}): attempt {unit.attempt}")
    patch = checkpoint_patch(aws)
    Unit.objects.filter(pk=unit.pk).update(
        checkpoint_patch=redact_text(patch), checkpoint_commit=commit or ""
    )
    with transaction.atomic():
        _charge(task, unit, result)
    if result.outcome != Outcome.FINISHED:
        summary = f"{result.outcome}: {result.detail or result.summary}"
        _end_unit(unit, UnitStatus.FAILED, summary=summary)
        return False
    verification = verify(
        aws.path,
        list(task.verify),
        session_id=task.plan.session_id,
        unit_id=unit.pk,
        accepted_by=task.plan.accepted_by,
        env=resources,
    )
    Unit.objects.filter(pk=unit.pk).update(
        verification_passed=verification.passed, verification_output=verification.report()
    )
    status = UnitStatus.SUCCEEDED if verification.passed else UnitStatus.FAILED
    _end_unit(unit, status, summary=result.summary)
    return verification.passed and patch_changed_lines(patch) > 0


def round_candidates(
    round_: AttemptRound, verdicts: dict[int, str | None] | None = None
) -> list[Candidate]:
    """The round's attempts as the ranking sees them, with the verdict on each verified
    one that a hook gave (``extensions.attempt_verdicts``)."""
    verdicts = verdicts or {}
    return [
        Candidate(
            unit=unit.pk,
            attempt=unit.attempt,
            passed=bool(unit.verification_passed),
            changed_lines=patch_changed_lines(unit.checkpoint_patch),
            cost=unit.cost,
            verdict=verdicts.get(unit.pk) if unit.verification_passed else None,
        )
        for unit in round_.attempts.order_by("attempt")
    ]


def _round_close(
    task: Task,
    round_: AttemptRound,
    ws: Workspace,
    options: UnitOptions,
    watch: StopWatch,
    state: RoundState,
) -> UnitReport:
    """Rank, record the choice and move the task on: to review with the winner, held
    as a single unit's stop would hold it, or a spent retry when none passed."""
    ranked = rank(round_candidates(round_, state.verdicts))
    reason = choice_reason(ranked)
    units = {unit.pk: unit for unit in round_.attempts.order_by("attempt")}
    winner = units[ranked[0].unit] if ranked[0].eligible else None
    stop = stop_read(task.pk) or watch.request
    task.refresh_from_db()
    with transaction.atomic():
        AttemptRound.objects.filter(pk=round_.pk).update(
            ranking=[each.row() for each in ranked],
            reason=reason,
            winner=winner,
            finished_at=timezone.now(),
            chosen_at=timezone.now() if winner else None,
        )
        outcome = _move_on(task, list(units.values()), winner, reason, stop, state)
    person = False
    if outcome == "verified" and winner is not None:
        # The winner's review acts as a single unit's would (``extensions.verified``):
        # required, a request for changes sends the task back; advisory, a person looks.
        winner_ws = attempt_workspace(ws, task, winner)
        person = extensions.verified_run(task, winner, winner_ws, options)
        task.refresh_from_db()
    # Before the review: approved at once, the task is merged, and its attempts'
    # branches go with it, which git refuses while their worktrees are there.
    attempts_tidy(ws, task, list(units.values()))
    if outcome == "verified" and task.status == TaskStatus.REVIEW:
        review_start(task=task, person=person)  # approved at once where allowed: merged
        for offer in extensions.review_waiting:  # a pull request, after the commit
            transaction.on_commit(partial(offer, task.pk))
    for unit in units.values():
        extensions.unit_ended_run(unit.pk)
    last = winner or list(units.values())[-1]
    return _next(task, last, outcome, reason)


def _move_on(
    task: Task,
    units: list[Unit],
    winner: Unit | None,
    reason: str,
    stop: StopRequest | None,
    state: RoundState,
) -> str:
    if stop is not None:  # a person's Cancel or Stop of the task
        _person_stopped(task, units[0], stop)
        return str(Outcome.INTERRUPTED)
    if winner is not None:
        attempt_keep(task=task, winner=winner, reason=reason)
        return "verified"
    held = [cause for cause in state.causes.values() if cause in HELD_BY_CAUSE]
    if held:  # the session paused or ended, a stuck loop: held as a single unit is
        status, hold, _ = HELD_BY_CAUSE[held[0]]
        task_transition(task=task, to=status, reason=reason, hold=hold)
        return str(Outcome.INTERRUPTED)
    _retry_or_fail(task, units[-1], f"best-of-{len(units)}: {reason}")
    return "verification_failed"
