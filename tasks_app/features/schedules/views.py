"""A project's schedules page, one schedule's page (its runs, the edit form) and the
buttons: pause, resume, delete, run now. Interfaces: parse, call a service, render the
form again with each problem beside its field, or redirect (POST, then GET)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode
from zoneinfo import available_timezones

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST
from pydantic import ValidationError

from agents_app.access import Action, may, require
from agents_app.models import Project
from sf_core.actors import Actor
from sf_core.errors import SfError
from sf_core.http import AuthedRequest
from tasks_app.features.schedules.forms import form_data, form_initial, form_of
from tasks_app.features.schedules.selectors import project_schedules, schedule_row, schedule_runs
from tasks_app.features.schedules.services import (
    schedule_create,
    schedule_delete,
    schedule_run_now,
    schedule_set_paused,
    schedule_update,
)
from tasks_app.features.schedules.spec import (
    MODEL_MODES,
    PROFILES,
    RUN_CONTROLS,
    ScheduleSpec,
    spec_errors,
)
from tasks_app.features.schedules.timing import ScheduleInvalid
from tasks_app.models import Schedule

ZONES = sorted(available_timezones())


@login_required
def project_schedules_view(request: AuthedRequest, project_id: int) -> HttpResponse:
    """The list (next run in the schedule's zone and in UTC, last run) and, for
    operators, the form for a new one."""
    project = get_object_or_404(Project, pk=project_id)
    require(request.user, project, Action.VIEW)
    form, status = form_initial(), 200
    errors: dict[str, str] = {}
    if request.method == "POST":
        require(request.user, project, Action.MANAGE_SCHEDULES)
        form = form_data(request.POST)
        saved, errors = _save(request, form, project=project)
        if saved is not None:
            return redirect("schedule-detail", schedule_id=saved.pk)
        status = 400
    context = {
        "project": project,
        "rows": project_schedules(project=project),
        "may_manage": may(request.user, project, Action.MANAGE_SCHEDULES),
        **_form_context(form, errors),
    }
    return render(request, "tasks_app/schedules.html", context, status=status)


@login_required
def schedule_detail_view(request: AuthedRequest, schedule_id: int) -> HttpResponse:
    """One schedule: its runs (every run, skip, miss and refusal) and the edit form."""
    schedule = _schedule(request, schedule_id)
    form, status = form_of(schedule), 200
    errors: dict[str, str] = {}
    if request.method == "POST":
        require(request.user, schedule.project, Action.MANAGE_SCHEDULES)
        form = form_data(request.POST)
        saved, errors = _save(request, form, schedule=schedule)
        if saved is not None:
            return redirect("schedule-detail", schedule_id=saved.pk)
        status = 400
    context = {
        "project": schedule.project,
        "schedule": schedule,
        "row": schedule_row(schedule, None),
        "runs": schedule_runs(schedule=schedule),
        "may_manage": may(request.user, schedule.project, Action.MANAGE_SCHEDULES),
        "error": request.GET.get("error", "")[:500],
        **_form_context(form, errors),
    }
    return render(request, "tasks_app/schedule_detail.html", context, status=status)


@require_POST
@login_required
def schedule_action_view(request: AuthedRequest, schedule_id: int, action: str) -> HttpResponse:
    """**Pause**, **Resume**, **Run now** or **Delete**; back to the schedule's page
    (the project's list after a delete), a refusal's words shown there."""
    schedule = _schedule(request, schedule_id)
    if action not in ("pause", "resume", "run", "delete"):
        raise Http404(f"no schedule action {action!r}")
    require(request.user, schedule.project, Action.MANAGE_SCHEDULES)
    actor = Actor.of(request.user)
    try:
        if action == "delete":
            schedule_delete(schedule=schedule, actor=actor)
            return redirect("project-schedules", project_id=schedule.project_id)
        if action == "run":
            schedule_run_now(schedule=schedule, actor=actor)
        else:
            schedule_set_paused(schedule=schedule, paused=action == "pause", actor=actor)
    except SfError as exc:
        page = reverse("schedule-detail", args=[schedule.pk])
        return redirect(f"{page}?{urlencode({'error': str(exc)})}")
    return redirect("schedule-detail", schedule_id=schedule.pk)


def _schedule(request: AuthedRequest, schedule_id: int) -> Schedule:
    queryset = Schedule.objects.select_related("project", "run_as")
    schedule = get_object_or_404(queryset, pk=schedule_id)
    require(request.user, schedule.project, Action.VIEW)
    return schedule


def _save(
    request: AuthedRequest,
    form: dict[str, str],
    *,
    project: Project | None = None,
    schedule: Schedule | None = None,
) -> tuple[Schedule | None, dict[str, str]]:
    """Validate, then create or update; the problems by field when anything is wrong."""
    try:
        spec = ScheduleSpec.model_validate(form)
    except ValidationError as exc:
        return None, spec_errors(exc)
    actor = Actor.of(request.user)
    try:
        if schedule is not None:
            return schedule_update(schedule=schedule, spec=spec, actor=actor), {}
        assert project is not None
        return schedule_create(project=project, spec=spec, actor=actor), {}
    except ScheduleInvalid as exc:
        return None, {exc.field: exc.message}
    except SfError as exc:  # a role the schedule's profile or run control needs
        return None, {"form": str(exc)}


def _form_context(form: dict[str, str], errors: dict[str, str]) -> dict[str, Any]:
    return {
        "form": form,
        "errors": errors,
        "zones": ZONES,
        "run_controls": RUN_CONTROLS,
        "profiles": PROFILES,
        "model_modes": MODEL_MODES,
    }
