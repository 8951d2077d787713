"""Schedules: list, create, show, pause, resume, delete, run now, and a schedule's runs.

The same services and access rules as the schedules page (``tasks_app.schedules``): a
schedule of a project the token cannot see is 404; managing one needs the operator's
role and the roles of what it runs (403 problem otherwise); a bad cron expression or
time zone is a 422 problem naming the field.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from django.http import HttpRequest, HttpResponse
from ninja import Query, Router, Schema

from agents_app.access import Action, require
from agents_app.models import Project
from api_app.auth import api_user, visible_or_404
from api_app.idempotency import idempotent
from api_app.problems import Problem
from api_app.schemas import Page
from sf_core.actors import Actor
from tasks_app.models import Schedule, ScheduleRun
from tasks_app.schedules.services import (
    schedule_create,
    schedule_delete,
    schedule_run_now,
    schedule_set_paused,
)
from tasks_app.schedules.spec import ScheduleSpec
from tasks_app.schedules.timing import local_text

router = Router(tags=["schedules"])
ERRORS: dict[int, type] = {400: Problem, 403: Problem, 404: Problem, 409: Problem, 422: Problem}


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


def _schedule(request: HttpRequest, schedule_id: int) -> Schedule:
    queryset = Schedule.objects.select_related("project", "run_as")
    return visible_or_404(request, queryset, schedule_id, "project")


@router.get("/projects/{project_id}/schedules", response={200: list[ScheduleOut], **ERRORS})
def schedules_list(request: HttpRequest, project_id: int) -> list[ScheduleOut]:
    project = visible_or_404(request, Project.objects.all(), project_id, "")
    found = Schedule.objects.filter(project=project).select_related("run_as")
    return [schedule_out(schedule) for schedule in found]


@router.post("/projects/{project_id}/schedules", response={201: ScheduleOut, **ERRORS})
def schedules_create(request: HttpRequest, project_id: int, data: ScheduleSpec) -> HttpResponse:
    """A cron expression (five fields, wall-clock time) in an IANA time zone, and an
    intent or a plan template; runs act as the caller unless an admin names ``run_as``."""
    project = visible_or_404(request, Project.objects.all(), project_id, "")
    user = api_user(request)
    require(user, project, Action.MANAGE_SCHEDULES)

    def create() -> ScheduleOut:
        return schedule_out(schedule_create(project=project, spec=data, actor=Actor.of(user)))

    return idempotent(request, data.model_dump(mode="json"), create)


@router.get("/schedules/{schedule_id}", response={200: ScheduleOut, **ERRORS})
def schedule_show(request: HttpRequest, schedule_id: int) -> ScheduleOut:
    return schedule_out(_schedule(request, schedule_id))


@router.get("/schedules/{schedule_id}/runs", response={200: ScheduleRunPage, **ERRORS})
def schedule_runs_list(
    request: HttpRequest, schedule_id: int, page: Query[Page]
) -> ScheduleRunPage:
    """Every run, skip, miss and refusal, newest occurrence first."""
    runs = ScheduleRun.objects.filter(schedule=_schedule(request, schedule_id))
    runs = runs.order_by("-occurrence", "-pk")
    items = runs[page.offset : page.offset + page.limit]
    return ScheduleRunPage(
        count=runs.count(),
        limit=page.limit,
        offset=page.offset,
        items=[run_out(run) for run in items],
    )


@router.post("/schedules/{schedule_id}/pause", response={200: ScheduleOut, **ERRORS})
def schedule_pause(request: HttpRequest, schedule_id: int) -> ScheduleOut:
    schedule, actor = _schedule(request, schedule_id), Actor.of(api_user(request))
    return schedule_out(schedule_set_paused(schedule=schedule, paused=True, actor=actor))


@router.post("/schedules/{schedule_id}/resume", response={200: ScheduleOut, **ERRORS})
def schedule_resume(request: HttpRequest, schedule_id: int) -> ScheduleOut:
    """Runs again from the first occurrence after now (a pause is not caught up)."""
    schedule, actor = _schedule(request, schedule_id), Actor.of(api_user(request))
    return schedule_out(schedule_set_paused(schedule=schedule, paused=False, actor=actor))


@router.delete("/schedules/{schedule_id}", response={204: None, **ERRORS})
def schedule_remove(request: HttpRequest, schedule_id: int) -> HttpResponse:
    """The schedule and its runs; the sessions it started stay."""
    schedule = _schedule(request, schedule_id)
    schedule_delete(schedule=schedule, actor=Actor.of(api_user(request)))
    return HttpResponse(status=204)


@router.post("/schedules/{schedule_id}/run", response={201: ScheduleRunOut, **ERRORS})
def schedule_run(request: HttpRequest, schedule_id: int) -> HttpResponse:
    """Run once now, as the schedule's person; *skipped* while its previous run's work
    is still going."""
    schedule = _schedule(request, schedule_id)
    actor = Actor.of(api_user(request))

    def create() -> ScheduleRunOut:
        return run_out(schedule_run_now(schedule=schedule, actor=actor))

    return idempotent(request, {"schedule": schedule.pk}, create)
