"""After a unit: checkpoint, accounting, the verification gate, and what comes next
(review, retry, failure, a blocked task) — then run control decides what is next.

What comes next is a call: ``_next`` dispatches the session on commit
(``dispatch.dispatch_on_commit``). What features add after a unit (skill evidence, a
pull request, line comments) they add through ``extensions``.
Before that it settles the plan (``tasks_app.completion.plan_settle``): a plan whose
work has ended becomes done, failed or cancelled, and a session with no accepted plan
left becomes completed or failed.
"""

from __future__ import annotations

import hashlib
import logging
from decimal import Decimal
from functools import partial

from django.db import transaction
from django.db.models import F, Sum
from django.utils import timezone

from agents_app.gate.redaction import redact_text
from agents_app.models import AgentSession, ModelCall, PauseCause, TraceKind
from agents_app.runtime.llm import ModelNotConfigured, ProviderAuthError, ProviderOutage
from agents_app.runtime.loop import LoopResult, Outcome
from agents_app.runtime.trace import TraceRecorder
from agents_app.services import (
    DispatchPoint,
    session_apply_due,
    session_request_repair,
    session_set_paused,
    session_unit_ended,
)
from agents_app.services.budget import session_charge
from sf_core.actors import Actor
from sf_core.errors import SfError
from sf_core.git import GitError
from tasks_app.completion import plan_settle
from tasks_app.engine import extensions
from tasks_app.engine.dispatch import dispatch_on_commit
from tasks_app.engine.hooks import StopCause
from tasks_app.engine.outage import provider_outage, provider_recovered
from tasks_app.engine.project_hooks import unit_pre_verify
from tasks_app.engine.record import branch_push
from tasks_app.engine.reservations import unit_settle
from tasks_app.engine.review import review_start
from tasks_app.engine.stopping import StopRequest, stop_read
from tasks_app.engine.stuck import detect
from tasks_app.engine.values import UnitOptions, UnitReport
from tasks_app.engine.verification import verify
from tasks_app.engine.worktrees import checkpoint_commit, checkpoint_patch
from tasks_app.lifecycle import task_transition
from tasks_app.models import (
    HoldReason,
    ScheduleStatus,
    StopKind,
    Task,
    TaskSchedule,
    TaskStatus,
    Unit,
    UnitStatus,
)
from tasks_app.services import schedule_ready
from tasks_app.workspaces import Workspace

logger = logging.getLogger("sf.engine")
APPROVAL_NEEDED = "approval needed"  # the words a task blocked on a risk decision shows
# A unit the hooks stopped: how the task is held, and how the unit is recorded.
HELD_BY_CAUSE: dict[StopCause, tuple[TaskStatus, HoldReason, UnitStatus]] = {
    StopCause.STUCK: (TaskStatus.BLOCKED, HoldReason.STUCK, UnitStatus.FAILED),
    StopCause.STOPPED: (TaskStatus.PAUSED, HoldReason.STOPPED, UnitStatus.CANCELLED),
    StopCause.SESSION_PAUSED: (
        TaskStatus.PAUSED,
        HoldReason.SESSION_PAUSED,
        UnitStatus.CANCELLED,
    ),
    StopCause.SESSION_ENDED: (TaskStatus.PAUSED, HoldReason.SESSION_ENDED, UnitStatus.CANCELLED),
    # A person's stop stays until a person resumes it (not lifted as the session runs).
    StopCause.AFTER_STEP: (TaskStatus.PAUSED, HoldReason.PERSON, UnitStatus.CANCELLED),
}


PERSON_STOPS = (StopCause.CANCELLED, StopCause.AFTER_STEP)


def unit_complete(
    *,
    task: Task,
    unit: Unit,
    ws: Workspace,
    result: LoopResult,
    cause: StopCause | None = None,
    stop: StopRequest | None = None,
    options: UnitOptions | None = None,
) -> UnitReport:
    """Record the unit and move the task on, according to how its loop ended.

    ``cause`` is why the engine's hooks stopped the loop (``Outcome.INTERRUPTED``);
    ``stop``, a person's stop of the unit (``stopping``): a Cancel asked by the loop's
    end ends it so, whatever the loop's outcome (no verification, no review).
    ``options``: the unit's, for what reviews it after verification (``verified``)."""
    if _superseded(unit):
        return _superseded_report(task, unit)
    _checkpoint(task, unit, ws)
    with transaction.atomic():  # the accounting commits once
        _charge(task, unit, result)
        if result.steps:
            provider_recovered(session_id=task.plan.session_id)
    task.refresh_from_db()
    stop = stop_read(task.pk) or stop
    if stop is not None and stop.kind == StopKind.CANCEL:
        cause = StopCause.CANCELLED
        result.outcome, result.detail = Outcome.INTERRUPTED, stop.words()
    outcome, detail = str(result.outcome), result.detail or result.summary
    if result.outcome == Outcome.INTERRUPTED and cause in PERSON_STOPS and stop is not None:
        _person_stopped(task, unit, stop)
    elif result.outcome == Outcome.FINISHED:
        outcome, detail = _verify_and_review(task, unit, ws, result, options or UnitOptions())
    elif result.outcome in (Outcome.BLOCKED, Outcome.NEEDS_PERSON):
        _wait_for_person(task, unit, result)
    elif result.outcome == Outcome.BUDGET:
        _out_of_budget(task, unit, result.detail)
    elif result.outcome == Outcome.INTERRUPTED:
        _interrupted(task, unit, result.detail, cause or StopCause.STOPPED)
    else:  # step limit, no progress
        _end_unit(unit, UnitStatus.FAILED, summary=f"{result.outcome}: {result.detail}")
        _retry_or_fail(task, unit, f"{result.outcome}: {result.detail}")
    report = _next(task, unit, outcome, detail)
    _skill_evidence(unit)
    return report


def _superseded(unit: Unit) -> bool:
    """The unit was recorded as crashed while it still ran (the sweep found its heartbeat
    stale: a starved or cut-off process) and its task may already run in another unit:
    this one's end must change nothing, not even a commit in the shared worktree."""
    return not Unit.objects.filter(pk=unit.pk, status=UnitStatus.RUNNING).exists()


def _superseded_report(task: Task, unit: Unit) -> UnitReport:
    logger.warning(
        "unit %s of %s was recovered while it ran; its end is ignored", unit.attempt, task.key
    )
    task.refresh_from_db()
    return UnitReport(task.pk, unit.pk, unit.attempt, "superseded", task.status)


def _skill_evidence(unit: Unit) -> None:
    """What features do after each unit's outcome (``extensions.unit_ended``: skill
    evidence, ``skill_proposals``). A by-product of the unit: whatever goes wrong there
    is logged and rolled back to its savepoint, never a change to how the unit ended."""
    extensions.unit_ended_run(unit.pk)


def _out_of_budget(task: Task, unit: Unit, detail: str) -> None:
    """The session's budget: the task waits, paused, until the session runs again (a
    person lifts its budget pause). The task's own budget: nothing the engine could lift,
    so the task fails with the figures — paused, it was resumed into unit after unit."""
    _end_unit(unit, UnitStatus.CANCELLED, summary=detail)
    if task.cost_budget is not None and task.cost_spent >= task.cost_budget:
        reason = f"its budget is spent: ${task.cost_spent} of ${task.cost_budget} ({detail})"
        task_transition(task=task, to=TaskStatus.FAILED, reason=reason)
        return
    task_transition(
        task=task, to=TaskStatus.PAUSED, reason=f"budget: {detail}", hold=HoldReason.BUDGET
    )


def _wait_for_person(task: Task, unit: Unit, result: LoopResult) -> None:
    """A gate decision to review (blocked) or a question to answer (needs a person)."""
    asked = result.outcome == Outcome.NEEDS_PERSON
    waiting = (
        result.question or f"{APPROVAL_NEEDED} (decision {result.decision_id}): {result.detail}"
    )
    _end_unit(unit, UnitStatus.BLOCKED, summary=waiting)
    if result.resume:  # what the next attempt goes on from once approved (``resuming``)
        Unit.objects.filter(pk=unit.pk).update(resume_state=result.resume)
    hold = HoldReason.QUESTION if asked else HoldReason.APPROVAL_NEEDED
    task_transition(task=task, to=TaskStatus.BLOCKED, reason=waiting, hold=hold)


def _interrupted(task: Task, unit: Unit, detail: str, cause: StopCause) -> None:
    """A timeout is a spent attempt; anything else holds the task with its cause."""
    if cause == StopCause.TIMEOUT:
        _end_unit(unit, UnitStatus.TIMED_OUT, summary=detail)
        _retry_or_fail(task, unit, detail)
        return
    status, hold, unit_status = HELD_BY_CAUSE[cause]
    _end_unit(unit, unit_status, summary=detail)
    task_transition(task=task, to=status, reason=detail, hold=hold)


def _person_stopped(task: Task, unit: Unit, stop: StopRequest) -> None:
    """A person's Cancel ends the task (its worktree kept for inspection); a Stop after
    this step pauses it, its work kept for Resume. Either way with their name."""
    words = stop.words()
    _end_unit(unit, UnitStatus.CANCELLED, summary=words)
    if stop.kind == StopKind.CANCEL:
        task_transition(task=task, to=TaskStatus.CANCELLED, reason=words, actor=stop.actor)
        schedule_ready(plan=task.plan)  # its dependents: blocked, unless ``always``
        return
    task_transition(
        task=task, to=TaskStatus.PAUSED, reason=words, actor=stop.actor, hold=HoldReason.PERSON
    )


def unit_fail(*, task: Task, unit: Unit, ws: Workspace, error: SfError) -> UnitReport:
    """The unit could not run to the end (replay miss, provider refused, git error).

    A provider that refuses our credentials or billing, or no model configured,
    pauses the session with the reason: a person must act before more units run. A
    provider outage puts the task back without spending a retry and pauses the session
    until the sweep tries again (``outage``). What the unit spent is charged either way.
    """
    if _superseded(unit):
        return _superseded_report(task, unit)
    reason = str(error)
    charge_from_ledger(task, unit)
    session = AgentSession.objects.get(pk=task.plan.session_id)
    TraceRecorder(session=session, unit_id=unit.pk).record(
        TraceKind.ERROR, payload={"error": reason}
    )
    if isinstance(error, ProviderOutage):
        provider_outage(task=task, unit=unit, reason=reason)
        return _next(task, unit, "provider_unavailable", reason)
    _end_unit(unit, UnitStatus.FAILED, summary=reason)
    task.refresh_from_db()
    if task.status in (TaskStatus.IN_PROGRESS, TaskStatus.VERIFYING):
        task_transition(task=task, to=TaskStatus.FAILED, reason=reason)
    if isinstance(error, ProviderAuthError | ModelNotConfigured):
        session_set_paused(
            session=session,
            paused=True,
            reason=reason,
            actor=Actor.system("provider"),
            cause=PauseCause.PROVIDER,
        )
    return _next(task, unit, "error", reason)


def _checkpoint(task: Task, unit: Unit, ws: Workspace) -> str | None:
    try:
        commit = checkpoint_commit(ws, f"sf({task.key}): attempt {unit.attempt}")
        patch = checkpoint_patch(ws)
    except GitError as exc:
        Unit.objects.filter(pk=unit.pk).update(summary=f"checkpoint failed: {exc}")
        return None
    # Record mode: pushed before anything names the commit, or not at all (a GitError
    # here is a system fault: the task runs again from what the record has).
    branch_push(ws)
    with transaction.atomic():  # one commit for the checkpoint's rows
        Unit.objects.filter(pk=unit.pk).update(
            checkpoint_patch=redact_text(patch), checkpoint_commit=commit or ""
        )
        for checked in extensions.checkpointed:  # line comments the attempt changed
            checked(unit, ws)
        if commit:
            Task.objects.filter(pk=task.pk).update(checkpoint_ref=commit)
    return commit or (task.checkpoint_ref or None)


def _charge(task: Task, unit: Unit, result: LoopResult) -> None:
    Unit.objects.filter(pk=unit.pk).update(
        model=result.model,
        tokens_in=result.tokens_in,
        tokens_out=result.tokens_out,
        cost=result.cost,
    )
    Task.objects.filter(pk=task.pk).update(cost_spent=F("cost_spent") + result.cost)
    session_charge(session=AgentSession.objects.get(pk=task.plan.session_id), cost=result.cost)
    # Charged first, released second: in between the budget looks fuller, never emptier.
    unit_settle(unit_id=unit.pk, session_id=task.plan.session_id)


def charge_from_ledger(task: Task, unit: Unit) -> None:
    """Charge what a unit that ended without a loop result spent (an error, a crash the
    sweep recovered): its calls in the cost ledger (``ModelCall``), less what ``_charge``
    charged already; then release its reservation."""
    calls = ModelCall.objects.filter(unit=unit).aggregate(
        cost=Sum("cost"), tokens_in=Sum("tokens_in"), tokens_out=Sum("tokens_out")
    )
    charged, tokens_in = Unit.objects.values_list("cost", "tokens_in").get(pk=unit.pk)
    extra = (calls["cost"] or Decimal(0)) - charged
    if extra > 0 or (calls["tokens_in"] or 0) > tokens_in:  # a free model spends tokens too
        Unit.objects.filter(pk=unit.pk).update(
            cost=max(charged, calls["cost"] or Decimal(0)),
            tokens_in=calls["tokens_in"] or 0,
            tokens_out=calls["tokens_out"] or 0,
        )
    if extra > 0:
        Task.objects.filter(pk=task.pk).update(cost_spent=F("cost_spent") + extra)
        session_charge(session=AgentSession.objects.get(pk=task.plan.session_id), cost=extra)
    unit_settle(unit_id=unit.pk, session_id=task.plan.session_id)


def _verify_and_review(
    task: Task, unit: Unit, ws: Workspace, result: LoopResult, options: UnitOptions
) -> tuple[str, str]:
    task_transition(task=task, to=TaskStatus.VERIFYING, reason="the agent finished")
    blocked, notes = unit_pre_verify(task=task, unit=unit, ws=ws)  # the project's hooks
    verification = blocked or verify(
        ws.path,
        list(task.verify),
        session_id=task.plan.session_id,
        unit_id=unit.pk,
        accepted_by=task.plan.accepted_by,
        env=Unit.objects.values_list("resources", flat=True).get(pk=unit.pk),
    )
    report = notes + verification.report()
    with transaction.atomic():  # the verification, the unit's end and the task's move
        Unit.objects.filter(pk=unit.pk).update(
            verification_passed=verification.passed, verification_output=report
        )
        late = stop_read(task.pk)  # a Cancel while the verify commands ran
        if late is not None and late.kind == StopKind.CANCEL:
            _person_stopped(task, unit, late)
            return str(Outcome.INTERRUPTED), late.words()
        if not verification.passed:
            _end_unit(unit, UnitStatus.FAILED, summary=result.summary)
            _retry_or_fail(task, unit, "verification failed", verification_failed=True)
            return "verification_failed", report[-500:]
        _end_unit(unit, UnitStatus.SUCCEEDED, summary=result.summary)
        task_transition(task=task, to=TaskStatus.REVIEW, reason="verification passed")
    # A model's review first (``extensions.verified``): it may send the task back.
    person = extensions.verified_run(task, unit, ws, options)
    task.refresh_from_db()
    if task.status != TaskStatus.REVIEW:
        return "verified", result.summary
    review_start(task=task, person=person)
    # Still waiting for a person: a pull request on the project's forge, if it has one
    # (after the commit: the forge is a network call).
    for offer in extensions.review_waiting:
        transaction.on_commit(partial(offer, task.pk))
    return "verified", result.summary


def _retry_or_fail(
    task: Task, unit: Unit, reason: str, *, verification_failed: bool = False
) -> None:
    """Another attempt while retries remain; then failed, and repair per project policy.

    The retry count lives in the database, so it survives restarts. Three identical
    verification failures in a row are a stuck loop: the task is surfaced as blocked.
    """
    task.refresh_from_db()
    if verification_failed and _same_failure_repeated(task):
        task_transition(
            task=task,
            to=TaskStatus.BLOCKED,
            reason="stuck: the same verification failure repeated",
            hold=HoldReason.STUCK,
        )
        return
    updated = Task.objects.filter(pk=task.pk, retry_count__lt=F("max_retries")).update(
        retry_count=F("retry_count") + 1
    )
    if updated:
        task.refresh_from_db()
        task_transition(
            task=task,
            to=TaskStatus.RETRYING,
            reason=f"{reason} (retry {task.retry_count} of {task.max_retries})",
        )
        return
    task_transition(
        task=task, to=TaskStatus.FAILED, reason=f"{reason}; {task.max_retries} retries spent"
    )
    session = AgentSession.objects.get(pk=task.plan.session_id)
    session_request_repair(
        session=session, cause=f"task {task.key} failed after {task.max_retries} retries"
    )


def _same_failure_repeated(task: Task) -> bool:
    outputs = Unit.objects.filter(task=task, verification_passed=False).order_by("attempt")
    history = [hashlib.sha256(u.verification_output.encode()).hexdigest() for u in outputs]
    stuck = detect(history)
    if stuck is None:
        return False
    Task.objects.filter(pk=task.pk).update(stuck_count=F("stuck_count") + 1)
    return True


def _end_unit(unit: Unit, status: str, *, summary: str = "") -> None:
    Unit.objects.filter(pk=unit.pk).update(
        status=status, summary=redact_text(summary[:20_000]), finished_at=timezone.now()
    )


def _next(task: Task, unit: Unit, outcome: str, detail: str) -> UnitReport:
    """Reschedule or consume the task, apply after-unit steering, then run control."""
    task.refresh_from_db()
    runnable = task.status in (TaskStatus.TODO, TaskStatus.RETRYING)
    with transaction.atomic():
        TaskSchedule.objects.filter(task=task).update(
            status=ScheduleStatus.DUE if runnable else ScheduleStatus.CONSUMED,
            due_at=timezone.now() if runnable else F("due_at"),
            consumed_at=None if runnable else timezone.now(),
            enqueued_at=None,
        )
        session = AgentSession.objects.get(pk=task.plan.session_id)
        session_apply_due(session=session, point=DispatchPoint.AFTER_UNIT)
        if _plan_finished(task):
            session_apply_due(session=session, point=DispatchPoint.MILESTONE)
        # Run control: assisted, or a /next step, pauses after this unit.
        session_unit_ended(session=session)
        plan_settle(plan_id=task.plan_id)  # the plan, then the session, may be finished
        dispatch_on_commit(session.pk)
    return UnitReport(task.pk, unit.pk, unit.attempt, outcome, task.status, detail)


def _plan_finished(task: Task) -> bool:
    final = (TaskStatus.DONE, TaskStatus.CANCELLED, TaskStatus.FAILED, TaskStatus.SKIPPED)
    return not Task.objects.filter(plan_id=task.plan_id).exclude(status__in=final).exists()
