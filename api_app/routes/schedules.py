"""Schedules: list, create, show, pause, resume, delete, run now, and a schedule's runs.

Each route parses the request and calls one operation (``api_app.operations.schedules``);
a bad cron expression or time zone is a 422 problem naming the field.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from ninja import Query, Router

from api_app.auth import api_token
from api_app.idempotency import KEY_PARAM, idempotent
from api_app.operations import schedules as ops
from api_app.operations.schedules import ScheduleOut, ScheduleRunOut, ScheduleRunPage
from api_app.problems import ERRORS
from api_app.schemas import Page
from tasks_app.features.schedules.spec import ScheduleSpec

router = Router(tags=["schedules"])


@router.get("/projects/{project_id}/schedules", response={200: list[ScheduleOut], **ERRORS})
def schedules_list(request: HttpRequest, project_id: int) -> list[ScheduleOut]:
    return ops.schedules_list(token=api_token(request), project_id=project_id)


@router.post("/projects/{project_id}/schedules", response={201: ScheduleOut, **ERRORS})
def schedules_create(
    request: HttpRequest, project_id: int, data: ScheduleSpec, key: str | None = KEY_PARAM
) -> HttpResponse:
    """A cron expression (five fields, wall-clock time) in an IANA time zone, and an
    intent or a plan template; runs act as the caller unless an admin names ``run_as``."""
    token = api_token(request)
    return idempotent(
        request,
        key,
        data,
        lambda: ops.schedule_register(token=token, project_id=project_id, spec=data),
    )


@router.get("/schedules/{schedule_id}", response={200: ScheduleOut, **ERRORS})
def schedule_show(request: HttpRequest, schedule_id: int) -> ScheduleOut:
    return ops.schedule_show(token=api_token(request), schedule_id=schedule_id)


@router.get("/schedules/{schedule_id}/runs", response={200: ScheduleRunPage, **ERRORS})
def schedule_runs_list(
    request: HttpRequest, schedule_id: int, page: Query[Page]
) -> ScheduleRunPage:
    """Every run, skip, miss and refusal, newest occurrence first."""
    return ops.schedule_runs(token=api_token(request), schedule_id=schedule_id, page=page)


@router.post("/schedules/{schedule_id}/pause", response={200: ScheduleOut, **ERRORS})
def schedule_pause(request: HttpRequest, schedule_id: int) -> ScheduleOut:
    return ops.schedule_pause(token=api_token(request), schedule_id=schedule_id, paused=True)


@router.post("/schedules/{schedule_id}/resume", response={200: ScheduleOut, **ERRORS})
def schedule_resume(request: HttpRequest, schedule_id: int) -> ScheduleOut:
    """Runs again from the first occurrence after now (a pause is not caught up)."""
    return ops.schedule_pause(token=api_token(request), schedule_id=schedule_id, paused=False)


@router.delete("/schedules/{schedule_id}", response={204: None, **ERRORS})
def schedule_remove(request: HttpRequest, schedule_id: int) -> HttpResponse:
    """The schedule and its runs; the sessions it started stay."""
    ops.schedule_remove(token=api_token(request), schedule_id=schedule_id)
    return HttpResponse(status=204)


@router.post("/schedules/{schedule_id}/run", response={201: ScheduleRunOut, **ERRORS})
def schedule_run(
    request: HttpRequest, schedule_id: int, key: str | None = KEY_PARAM
) -> HttpResponse:
    """Run once now, as the schedule's person; *skipped* while its previous run's work
    is still going."""
    token = api_token(request)
    return idempotent(
        request,
        key,
        {"schedule": schedule_id},
        lambda: ops.schedule_run(token=token, schedule_id=schedule_id),
    )
