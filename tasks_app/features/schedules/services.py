"""Schedules: create, change, pause, resume, delete, run now (every surface calls these).

Each checks the person first (``MANAGE_SCHEDULES``, and that they may do what the
schedule does: ``schedules.access``), validates everything before writing (``spec``),
and computes the next occurrence from now: editing or resuming a schedule never
catches up on occurrences from before the change.
"""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone

from agents_app.access import AccessDenied, Action, require_actor
from agents_app.models import Project
from sf_core.actors import Actor
from tasks_app.features.schedules.access import actions_require, person_of
from tasks_app.features.schedules.runner import schedule_run_start
from tasks_app.features.schedules.spec import ScheduleSpec
from tasks_app.features.schedules.timing import ScheduleInvalid, occurrence_after
from tasks_app.models import Schedule, ScheduleOwner, ScheduleRun, ScheduleRunStatus
from tasks_app.models import ScheduleRunTrigger as Trigger


def _run_as(spec: ScheduleSpec, actor: Actor, project: Project) -> tuple[str, User | None]:
    """The schedule's person: the one saving it, or (an admin's choice) another."""
    me = person_of(actor)
    if not spec.run_as or (me is not None and spec.run_as == me.get_username()):
        return (ScheduleOwner.PERSON, me) if me is not None else (ScheduleOwner.SYSTEM, None)
    try:  # making a schedule act as another person is an admin's choice
        require_actor(actor, project, Action.MANAGE_MEMBERS)
    except AccessDenied:
        raise ScheduleInvalid(
            "run_as",
            f"only a project admin may make a schedule run as someone else ({spec.run_as}); "
            "leave it empty to run it as yourself",
        ) from None
    person = User.objects.filter(username=spec.run_as, is_active=True).first()
    if person is None:
        raise ScheduleInvalid("run_as", f"no active user {spec.run_as!r}")
    return ScheduleOwner.PERSON, person


def _check(spec: ScheduleSpec, actor: Actor, project: Project) -> tuple[str, User | None]:
    require_actor(actor, project, Action.MANAGE_SCHEDULES)
    axes = {"run_control": spec.run_control, "permission_profile": spec.permission_profile}
    actions_require(actor, project, **axes)
    owner, person = _run_as(spec, actor, project)
    if person is not None and person != person_of(actor):
        actions_require(Actor.of(person), project, **axes)
    return owner, person


def _fields(spec: ScheduleSpec, now: datetime) -> dict[str, object]:
    return {
        "name": spec.name,
        "kind": spec.kind,
        "intent": spec.intent,
        "plan_text": spec.plan_text,
        "plan_format": spec.plan_format,
        "cron": spec.cron,
        "timezone": spec.timezone,
        "run_control": spec.run_control,
        "permission_profile": spec.permission_profile,
        "model_mode": spec.model_mode,
        "catch_up_window": spec.catch_up_window,
        "next_run_at": occurrence_after(cron=spec.cron, zone=ZoneInfo(spec.timezone), after=now),
        "updated_at": now,
    }


def schedule_create(
    *, project: Project, spec: ScheduleSpec, actor: Actor, now: datetime | None = None
) -> Schedule:
    """A new active schedule; its first run is the first occurrence after now."""
    now = now or timezone.now()
    owner, person = _check(spec, actor, project)
    try:
        with transaction.atomic():
            schedule = Schedule.objects.create(
                project=project,
                owner=owner,
                run_as=person,
                created_by=person_of(actor),
                created_at=now,
                **_fields(spec, now),
            )
    except IntegrityError:
        raise ScheduleInvalid("name", f"the project has a schedule named {spec.name!r}") from None
    return schedule


def schedule_update(
    *, schedule: Schedule, spec: ScheduleSpec, actor: Actor, now: datetime | None = None
) -> Schedule:
    """Change everything but the project; the next run is recomputed from now."""
    now = now or timezone.now()
    owner, person = _check(spec, actor, schedule.project)
    try:
        with transaction.atomic():
            Schedule.objects.filter(pk=schedule.pk).update(
                owner=owner, run_as=person, **_fields(spec, now)
            )
    except IntegrityError:
        raise ScheduleInvalid("name", f"the project has a schedule named {spec.name!r}") from None
    schedule.refresh_from_db()
    return schedule


def schedule_set_paused(
    *, schedule: Schedule, paused: bool, actor: Actor, now: datetime | None = None
) -> Schedule:
    """Pause (nothing runs, nothing is recorded as missed) or resume (from the first
    occurrence after now: a pause is not caught up)."""
    require_actor(actor, schedule.project, Action.MANAGE_SCHEDULES)
    if not paused:  # resuming starts runs again: the person must be allowed what they do
        actions_require(
            actor,
            schedule.project,
            run_control=schedule.run_control,
            permission_profile=schedule.permission_profile,
        )
    now = now or timezone.now()
    after = occurrence_after(cron=schedule.cron, zone=ZoneInfo(schedule.timezone), after=now)
    Schedule.objects.filter(pk=schedule.pk).update(paused=paused, next_run_at=after, updated_at=now)
    schedule.refresh_from_db()
    return schedule


def schedule_delete(*, schedule: Schedule, actor: Actor) -> None:
    """Delete a schedule and its run history; the sessions it started stay."""
    require_actor(actor, schedule.project, Action.MANAGE_SCHEDULES)
    schedule.delete()


def schedule_run_now(
    *, schedule: Schedule, actor: Actor, now: datetime | None = None
) -> ScheduleRun:
    """Run once now, as the schedule's person and under the same rules as a scheduled
    run (an unfinished previous run makes it *skipped*); the schedule's times do not
    change. The person clicking must be allowed what the schedule does."""
    require_actor(actor, schedule.project, Action.MANAGE_SCHEDULES)
    actions_require(
        actor,
        schedule.project,
        run_control=schedule.run_control,
        permission_profile=schedule.permission_profile,
    )
    now = now or timezone.now()
    run = ScheduleRun.objects.create(
        schedule=schedule,
        occurrence=now,
        last_occurrence=now,
        trigger=Trigger.MANUAL,
        status=ScheduleRunStatus.PENDING,
        actor=person_of(actor),
    )
    started = schedule_run_start(run_id=run.pk, now=now)
    return started or run
