"""Schedules for a token: list, create, show, pause, resume, delete, run now, and a
schedule's runs, with the schedules page's services and access rules (a schedule of a
project the token cannot see is 404; managing one needs the operator's role and the
roles of what it runs)."""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from ninja import Schema

from agents_app.access import Action, require
from agents_app.models import Project
from api_app.auth import visible_or_404
from api_app.models import ApiToken
from api_app.schemas import Page
from sf_core.actors import Actor
from tasks_app.features.schedules.services import (
    schedule_create,
    schedule_delete,
    schedule_run_now,
    schedule_set_paused,
)
from tasks_app.features.schedules.spec import ScheduleSpec
from tasks_app.features.schedules.timing import local_text
from tasks_app.models import Schedule, ScheduleRun


class ScheduleRunOut(Schema):
    id: int
    schedule_id: int
    occurrence: datetime
    last_occurrence: datetime
    occurrences: int
    trigger: str
    status: str
    reason: str
    session_id: int | None
    plan_request_id: int | None
    plan_id: int | None


class ScheduleOut(Schema):
    id: int
    project_id: int
    name: str
    kind: str
    intent: str
    plan_format: str
    cron: str
    timezone: str
    run_control: str
    permission_profile: str
    model_mode: str
    catch_up_window: timedelta
    paused: bool
    run_as: str | None
    next_run_at: datetime | None
    next_run_local: str | None


class ScheduleRunPage(Schema):
    count: int
    limit: int
    offset: int
    items: list[ScheduleRunOut]


def schedule_out(schedule: Schedule) -> ScheduleOut:
    zone = ZoneInfo(schedule.timezone)
    upcoming = None if schedule.paused else schedule.next_run_at
    return ScheduleOut(
        id=schedule.pk,
        project_id=schedule.project_id,
        name=schedule.name,
        kind=schedule.kind,
        intent=schedule.intent,
        plan_format=schedule.plan_format,
        cron=schedule.cron,
        timezone=schedule.timezone,
        run_control=schedule.run_control,
        permission_profile=schedule.permission_profile,
        model_mode=schedule.model_mode,
        catch_up_window=schedule.catch_up_window,
        paused=schedule.paused,
        run_as=schedule.run_as.get_username() if schedule.run_as else None,
        next_run_at=upcoming,
        next_run_local=local_text(upcoming, zone) if upcoming else None,
    )


def run_out(run: ScheduleRun) -> ScheduleRunOut:
    return ScheduleRunOut.model_validate(run, from_attributes=True)


def schedule_find(*, token: ApiToken, schedule_id: int) -> Schedule:
    queryset = Schedule.objects.select_related("project", "run_as")
    return visible_or_404(token, queryset, schedule_id, "project")


def schedules_list(*, token: ApiToken, project_id: int) -> list[ScheduleOut]:
    project = visible_or_404(token, Project.objects.all(), project_id, "")
    found = Schedule.objects.filter(project=project).select_related("run_as")
    return [schedule_out(schedule) for schedule in found]


def schedule_register(*, token: ApiToken, project_id: int, spec: ScheduleSpec) -> ScheduleOut:
    """A new schedule of the project; runs act as the caller unless an admin names
    ``run_as``."""
    project = visible_or_404(token, Project.objects.all(), project_id, "")
    require(token.user, project, Action.MANAGE_SCHEDULES)
    return schedule_out(schedule_create(project=project, spec=spec, actor=Actor.of(token.user)))


def schedule_show(*, token: ApiToken, schedule_id: int) -> ScheduleOut:
    return schedule_out(schedule_find(token=token, schedule_id=schedule_id))


def schedule_runs(*, token: ApiToken, schedule_id: int, page: Page) -> ScheduleRunPage:
    """Every run, skip, miss and refusal, newest occurrence first."""
    runs = ScheduleRun.objects.filter(schedule=schedule_find(token=token, schedule_id=schedule_id))
    runs = runs.order_by("-occurrence", "-pk")
    return ScheduleRunPage(**page.of(runs, run_out))


def schedule_pause(*, token: ApiToken, schedule_id: int, paused: bool) -> ScheduleOut:
    """Pause, or resume from the first occurrence after now (a pause is not caught up)."""
    schedule = schedule_find(token=token, schedule_id=schedule_id)
    changed = schedule_set_paused(schedule=schedule, paused=paused, actor=Actor.of(token.user))
    return schedule_out(changed)


def schedule_remove(*, token: ApiToken, schedule_id: int) -> None:
    """The schedule and its runs; the sessions it started stay."""
    schedule = schedule_find(token=token, schedule_id=schedule_id)
    schedule_delete(schedule=schedule, actor=Actor.of(token.user))


def schedule_run(*, token: ApiToken, schedule_id: int) -> ScheduleRunOut:
    """Run once now, as the schedule's person; *skipped* while its previous run's work is
    still going."""
    schedule = schedule_find(token=token, schedule_id=schedule_id)
    return run_out(schedule_run_now(schedule=schedule, actor=Actor.of(token.user)))
