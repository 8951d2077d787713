"""How a headless run ended: its outcome, what it waits for, and the result event."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Literal

from django.conf import settings
from django.db.models import Sum
from django.utils import timezone

from agents_app.models import (
    AgentSession,
    ReviewStatus,
    RiskDecision,
    SessionStatus,
    TraceEvent,
    TraceKind,
)
from sf_core.doctor import gate_report
from tasks_app.engine.health import gate_causes
from tasks_app.features.headless.answers import asked_question
from tasks_app.features.headless.events import ExitCode, ResultEvent, TaskOutcome
from tasks_app.models import HELD_STATUSES, HoldReason, Plan, Task, TaskStatus, Unit
from tasks_app.plan_lint import lint_errors, lint_text

FINISHED = (TaskStatus.DONE, TaskStatus.CANCELLED, TaskStatus.SKIPPED)


@dataclass
class Outcome:
    code: ExitCode
    status: Literal["success", "error", "timeout", "blocked", "cancelled", "reload", "usage"]
    reason: str
    waiting_for: list[str] = field(default_factory=list)


def settled_outcome(*, plan: Plan, session_id: int, step: bool, units_run: int) -> Outcome:
    """Nothing more runs: done, failed, or waiting for a person (and for what)."""
    tasks = list(plan.tasks.order_by("position"))
    if tasks and all(task.status in FINISHED for task in tasks):
        done = sum(task.status == TaskStatus.DONE for task in tasks)
        return Outcome(ExitCode.SUCCESS, "success", f"{done} of {len(tasks)} tasks done")
    failed = [task for task in tasks if task.status == TaskStatus.FAILED]
    waiting = waiting_for(session_id, tasks)
    if failed:
        names = ", ".join(f"{t.key} ({t.status_reason})" for t in failed)
        return Outcome(ExitCode.ERROR, "error", f"failed: {names}", waiting)
    if step and units_run:
        if waiting and any(t.status == TaskStatus.BLOCKED for t in tasks):
            return Outcome(ExitCode.BLOCKED, "blocked", "the unit needs a person", waiting)
        return Outcome(ExitCode.SUCCESS, "success", "one unit ran; `next` runs another")
    if waiting:
        return Outcome(ExitCode.BLOCKED, "blocked", waiting[0], waiting)
    return Outcome(ExitCode.ERROR, "error", "nothing is runnable and the plan is not done")


def waiting_for(session_id: int, tasks: list[Task]) -> list[str]:
    """What a person must do for the run to go on, one line each."""
    session = AgentSession.objects.get(pk=session_id)
    waiting = []
    if session.paused:
        waiting.append(f"session paused: {session.pause_reason or 'by a person'}")
    for decision in RiskDecision.objects.filter(
        session=session, review_status=ReviewStatus.PENDING
    ).order_by("pk"):
        waiting.append(
            f"approve or reject decision {decision.pk} ({decision.tool}: {decision.reason}) "
            "at /approvals/ or in the admin"
        )
    for task in tasks:
        line = _task_waits_for(task)
        if line:
            waiting.append(line)
        elif task.status in HELD_STATUSES and not pending_for(task, session):
            # Held for an approval that is no longer pending (answered, expired): the
            # task still waits for a person to unblock it, and says so.
            waiting.append(f"unblock {task.key}: {task.status_reason or task.hold_reason}")
    health = gate_report(max_age=settings.SF_DOCTOR_GATE_CACHE.total_seconds())
    if not health.healthy:  # the pre-dispatch gate holds every unit (docs/doctor.md)
        waiting.append(f"repair SF's health ({gate_causes(health)}): sf doctor, sf doctor --fix")
    return waiting


def pending_for(task: Task, session: AgentSession) -> bool:
    """Whether one of ``task``'s units has a decision waiting for a reviewer."""
    return RiskDecision.objects.filter(
        session=session, unit__task=task, review_status=ReviewStatus.PENDING
    ).exists()


def _task_waits_for(task: Task) -> str | None:
    if task.status == TaskStatus.BLOCKED:
        question = asked_question(task)
        if question is not None:
            return f"answer {task.key}'s question (--answers): {question}"
        if task.hold_reason != HoldReason.APPROVAL_NEEDED:  # the decision is listed already
            return f"unblock {task.key}: {task.status_reason}"
    elif task.status == TaskStatus.REVIEW:
        return f"review {task.key} on the task board"
    elif task.status == TaskStatus.PAUSED:
        return f"resume {task.key}: {task.status_reason}"
    return None


def awaiting_acceptance(plan: Plan) -> Outcome:
    reason = (
        f"plan {plan.pk} awaits acceptance: review it on the dashboard, or "
        f"`manage.py sf plan accept {plan.pk} --autonomous`, or run headless with --autonomous"
    )
    return Outcome(ExitCode.BLOCKED, "blocked", reason, [reason])


def lint_refused(plan: Plan) -> Outcome:
    """A model's plan whose verify commands fail the plan lint is not accepted
    unattended: a person edits or accepts it."""
    errors = lint_errors(plan.lint)
    reason = (
        f"plan {plan.pk} fails the plan lint ({len(errors)} errors; its verify commands "
        f"would not run or check nothing unattended): fix it on the plan page, then "
        f"`manage.py sf plan accept {plan.pk} --autonomous`"
    )
    return Outcome(ExitCode.BLOCKED, "blocked", reason, [reason, *lint_text(errors).splitlines()])


def session_outcome(session: AgentSession, plan: Plan | None) -> Outcome:
    """How a session that is no longer active ended, judged as headless judges a run
    that settled on ``plan`` (the one whose end finished the session)."""
    if session.status == SessionStatus.STOPPED:
        return Outcome(ExitCode.CANCELLED, "cancelled", f"session {session.pk} was stopped")
    if plan is None:
        reason = f"session {session.pk} {session.status} without a plan"
        return Outcome(ExitCode.ERROR, "error", reason)
    return settled_outcome(plan=plan, session_id=session.pk, step=False, units_run=0)


def session_result(session: AgentSession) -> ResultEvent:
    """The result event of a finished session, for a watcher that did not run it (the
    API's stream): its last accepted plan, every unit, the session's whole duration."""
    plan = (
        Plan.objects.filter(session=session, accepted_at__isnull=False)
        .order_by("-accepted_at", "-pk")
        .first()
    )
    ended = session.finished_at or timezone.now()
    return result_event(
        session_outcome(session, plan),
        session=session,
        plan=plan,
        started_at=session.created_at,
        duration_s=max(0.0, (ended - session.created_at).total_seconds()),
    )


def _session_cost(session: AgentSession) -> Decimal:
    """What the session's model calls cost: its units' and its planning calls'."""
    units = Unit.objects.filter(task__plan__session=session).aggregate(total=Sum("cost"))
    planning = TraceEvent.objects.filter(
        session=session, unit=None, kind=TraceKind.MODEL_STEP
    ).aggregate(total=Sum("cost"))
    return (units["total"] or Decimal(0)) + (planning["total"] or Decimal(0))


def result_event(
    outcome: Outcome,
    *,
    session: AgentSession | None,
    plan: Plan | None,
    started_at: datetime,
    duration_s: float,
) -> ResultEvent:
    """The run's last event: the outcome, its tasks, cost and how to resume. ``units``
    counts the plan's units started since ``started_at``."""
    tasks = list(plan.tasks.order_by("position")) if plan is not None else []
    cost = _session_cost(session) if session is not None else None
    units = (
        Unit.objects.filter(task__plan=plan, started_at__gte=started_at).count()
        if plan is not None
        else 0
    )
    return ResultEvent(
        at=timezone.now(),
        ok=outcome.code == ExitCode.SUCCESS,
        exit_code=int(outcome.code),
        status=outcome.status,
        reason=outcome.reason,
        session=session.pk if session else None,
        plan=plan.pk if plan else None,
        units=units,
        cost_usd=str(cost or Decimal("0")),
        duration_s=round(duration_s, 3),
        tasks=[
            TaskOutcome(key=t.key, title=t.title, status=t.status, reason=t.status_reason)
            for t in tasks
        ],
        waiting_for=outcome.waiting_for,
        resume=(
            f"python manage.py sf headless --session {session.pk}"
            if session is not None and outcome.code != ExitCode.SUCCESS
            else ""
        ),
    )
