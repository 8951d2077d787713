"""The schedules' sweep: claim what is due, start it, follow planning to the end.

Run by every worker's heartbeat every ``SF_SWEEP_INTERVAL`` (``sweep_due``; no beat
process to deploy) and, in embedded mode, by one thread of the web process
(``inline``). Any number of sweeps may run at once:

1. **Claim.** A due schedule's occurrences are claimed by a conditional update of its
   ``next_run_at`` (only the sweep that read the old value moves it) in the same
   transaction as their rows: the missed ones (policy: ``timing.catch_up``) and at
   most one *pending* run. ``UniqueConstraint(schedule, occurrence)`` is the second
   guard: one occurrence is one row, ever.
2. **Start.** A pending run is started under a lock of its schedule's row, so two runs
   of one schedule are never started side by side; if the previous run's work is still
   going it is *skipped* instead (the overlap rule), if the schedule's person may no
   longer do what it does it is *refused*. The work itself (session, planning or plan
   import, acceptance) happens in a savepoint: a failure leaves no half-made session,
   only the run marked *failed* with the reason. A worker that dies mid-start rolls
   the transaction back and leaves the run pending for the next sweep.
3. **Follow.** A run that is planning an intent becomes *proposed* when its plan
   waits for a person (manual run control) or *started* once the schedule accepted it
   (assisted, or autonomous: **Run autonomously** at the schedule's profile).
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from agents_app.axes import RunControl, WorkMode
from agents_app.services import session_create
from sf_core.actors import Actor
from sf_core.errors import SfError
from tasks_app.features.schedules.access import schedule_actor, schedule_refusal
from tasks_app.features.schedules.selectors import schedule_busy_run
from tasks_app.features.schedules.timing import catch_up, duration_text, local_text
from tasks_app.intake import plan_start, plan_upload, planning_start
from tasks_app.models import (
    Plan,
    PlanRequestStatus,
    PlanStatus,
    Schedule,
    ScheduleKind,
    ScheduleRun,
    ScheduleRunStatus,
    ScheduleRunTrigger,
)

logger = logging.getLogger("sf.schedules")
S = ScheduleRunStatus


def schedules_sweep(*, now: datetime | None = None) -> dict[str, int]:
    """One pass: claim every due schedule, start every pending run, follow planning."""
    now = now or timezone.now()
    due = Schedule.objects.filter(paused=False, next_run_at__lte=now)
    claimed = sum(schedule_claim_due(schedule=schedule, now=now) for schedule in due)
    pending = ScheduleRun.objects.filter(status=S.PENDING).order_by("occurrence", "pk")
    started = [
        schedule_run_start(run_id=pk, now=now) for pk in pending.values_list("pk", flat=True)
    ]
    planning = ScheduleRun.objects.filter(status=S.PLANNING).values_list("pk", flat=True)
    followed = [schedule_run_follow(run_id=pk) for pk in planning]
    return {
        "claimed": claimed,
        "started": sum(1 for run in started if run is not None),
        "followed": sum(1 for run in followed if run is not None),
    }


def schedule_claim_due(*, schedule: Schedule, now: datetime) -> int:
    """Record the occurrences due by ``now`` (missed ones, and at most one pending run)
    and move the schedule to its next occurrence; 0 if another sweep claimed them."""
    zone = ZoneInfo(schedule.timezone)
    plan = catch_up(
        cron=schedule.cron,
        zone=zone,
        due_at=schedule.next_run_at,
        now=now,
        window=schedule.catch_up_window,
    )
    rows = [_missed_row(schedule, span, zone) for span in plan.missed]
    if plan.start is not None:
        rows.append(_row(schedule, plan.start, S.PENDING))
    with transaction.atomic():
        won = Schedule.objects.filter(
            pk=schedule.pk, paused=False, next_run_at=schedule.next_run_at
        ).update(next_run_at=plan.next_run_at)
        if won != 1:  # another sweep, a pause or an edit got there first
            return 0
        ScheduleRun.objects.bulk_create(rows, ignore_conflicts=True)
    if plan.missed:
        logger.warning(
            "schedule %s: %d occurrence(s) missed", schedule.pk, sum(s.count for s in plan.missed)
        )
    return len(rows)


def _row(schedule: Schedule, occurrence: datetime, status: str, **fields: Any) -> ScheduleRun:
    return ScheduleRun(
        schedule=schedule,
        occurrence=occurrence,
        last_occurrence=fields.pop("last_occurrence", occurrence),
        status=status,
        **fields,
    )


def _missed_row(schedule: Schedule, span: Any, zone: ZoneInfo) -> ScheduleRun:
    window = f"the catch-up window ({duration_text(schedule.catch_up_window)}) had passed"
    if span.count == 1:
        reason = f"missed: SF was not running at {local_text(span.first, zone)}, and {window}"
    else:
        count = f"{'at least ' if span.at_least else ''}{span.count}"
        reason = (
            f"missed {count} occurrences from {local_text(span.first, zone)} to "
            f"{local_text(span.last, zone)}: SF was not running"
        )
    return _row(
        schedule,
        span.first,
        S.MISSED,
        last_occurrence=span.last,
        occurrences=span.count,
        reason=reason,
    )


def schedule_run_start(*, run_id: int, now: datetime | None = None) -> ScheduleRun | None:
    """Start a pending run (or skip, refuse, miss or fail it, with the reason). None if
    it is not pending any more (another sweep took it)."""
    now = now or timezone.now()
    with transaction.atomic():
        schedule_id = ScheduleRun.objects.filter(pk=run_id).values_list("schedule_id", flat=True)
        # The schedule's row first: every start of one schedule queues here, so the
        # overlap check below sees the run a concurrent start just committed.
        schedule = Schedule.objects.select_for_update().filter(pk__in=schedule_id).first()
        run = ScheduleRun.objects.select_for_update().filter(pk=run_id, status=S.PENDING).first()
        if schedule is None or run is None:
            return None
        status, fields = _decide(schedule, run, now)
        ScheduleRun.objects.filter(pk=run.pk).update(status=status, **fields)
    run.refresh_from_db()
    logger.info("schedule %s run %s: %s %s", schedule.pk, run.pk, run.status, run.reason)
    return run


def _decide(schedule: Schedule, run: ScheduleRun, now: datetime) -> tuple[str, dict[str, Any]]:
    late = now - run.occurrence
    if run.trigger == ScheduleRunTrigger.SCHEDULED and late > schedule.catch_up_window:
        within = duration_text(schedule.catch_up_window)
        return S.MISSED, {"reason": f"missed: not started within the catch-up window ({within})"}
    refusal = schedule_refusal(schedule=schedule)
    if refusal:
        return S.REFUSED, {"reason": f"refused: {refusal}"}
    busy = schedule_busy_run(schedule=schedule)
    if busy is not None:
        reason = f"skipped: run {busy.pk} (session {busy.session_id}) is still going"
        return S.SKIPPED, {"reason": reason}
    try:
        with transaction.atomic():  # a savepoint: a failure leaves no half-made session
            return _begin(schedule, run, now)
    except Exception as exc:
        if not isinstance(exc, SfError):
            logger.exception("schedule %s run %s failed to start", schedule.pk, run.pk)
        return S.FAILED, {"reason": f"failed: {_first_line(exc)}", "started_at": now}


def _begin(schedule: Schedule, run: ScheduleRun, now: datetime) -> tuple[str, dict[str, Any]]:
    """A new session with the schedule's axes, then planning or the plan's import."""
    actor = schedule_actor(schedule)
    when = local_text(run.occurrence, ZoneInfo(schedule.timezone))
    session = session_create(
        project=schedule.project,
        created_by=actor.user if isinstance(actor.user, User) else None,
        title=f"{schedule.name} · {when}"[:300],
        axes={
            "work_mode": WorkMode.PLAN,
            "run_control": schedule.run_control,
            "permission_profile": schedule.permission_profile,
            "model_mode": schedule.model_mode,
        },
    )
    fields: dict[str, Any] = {"session": session, "started_at": now, "actor": actor.user}
    if schedule.kind == ScheduleKind.INTENT:
        request = planning_start(session=session, intent=schedule.intent, actor=actor)
        return S.PLANNING, {**fields, "plan_request": request, "reason": "planning the intent"}
    plan = plan_upload(
        session=session,
        name=f"{schedule.name}.{schedule.plan_format}",
        content=schedule.plan_text.encode(),
    )
    status, reason = _accept(schedule, plan, actor)
    return status, {**fields, "plan": plan, "reason": reason}


def _accept(schedule: Schedule, plan: Plan, actor: Actor) -> tuple[str, str]:
    """Manual run control leaves the plan to a person; otherwise the schedule accepts it
    (its person was checked for the approver's role) and the run control goes on."""
    if schedule.run_control == RunControl.MANUAL:
        return S.PROPOSED, f"plan {plan.pk} waits for review"
    autonomous = schedule.run_control == RunControl.AUTONOMOUS
    plan_start(
        plan=plan,
        actor=actor,
        autonomous=autonomous,
        permission_profile=schedule.permission_profile,
        confirmed=True,  # saving an unrestricted schedule needed the admin's role
    )
    verb = "run autonomously" if autonomous else "accepted"
    return S.STARTED, f"plan {plan.pk} {verb} at {schedule.permission_profile}"


def schedule_run_follow(*, run_id: int) -> ScheduleRun | None:
    """A planning run whose plan request finished: proposed, started or failed. None
    while it still plans (or if another sweep followed it)."""
    with transaction.atomic():
        run = (
            ScheduleRun.objects.select_for_update(of=("self",))  # the run's row alone
            .select_related("schedule__project", "plan_request__plan")
            .filter(pk=run_id, status=S.PLANNING)
            .first()
        )
        request = run.plan_request if run is not None else None
        if run is None or request is None or request.status == PlanRequestStatus.PLANNING:
            return None
        status, fields = _after_planning(run, request.plan, request.status_reason)
        ScheduleRun.objects.filter(pk=run.pk).update(status=status, **fields)
    run.refresh_from_db()
    logger.info("schedule %s run %s: %s %s", run.schedule_id, run.pk, run.status, run.reason)
    return run


def _after_planning(
    run: ScheduleRun, plan: Plan | None, request_reason: str
) -> tuple[str, dict[str, Any]]:
    if plan is None:
        return S.FAILED, {"reason": f"failed: planning failed: {request_reason}"}
    if plan.status != PlanStatus.PROPOSED:
        return S.FAILED, {"plan": plan, "reason": f"failed: plan {plan.pk} is {plan.status}"}
    refusal = schedule_refusal(schedule=run.schedule)
    if refusal:
        return S.REFUSED, {"plan": plan, "reason": f"refused: {refusal}"}
    try:
        with transaction.atomic():
            status, reason = _accept(run.schedule, plan, schedule_actor(run.schedule))
    except SfError as exc:
        return S.FAILED, {"plan": plan, "reason": f"failed: {_first_line(exc)}"}
    return status, {"plan": plan, "reason": reason}


def _first_line(exc: Exception) -> str:
    return ((str(exc).strip().splitlines() or [type(exc).__name__])[0])[:1000]
