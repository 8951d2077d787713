"""The unit page (live trace, verification output, checkpoint diff) and task review."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.html import format_html
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseClientRedirect

from agents_app.access import Action, may_each, require
from agents_app.badge import badge_for
from sf_core.actors import Actor
from sf_core.errors import InvalidTransition, SfError
from sf_core.http import AuthedRequest
from tasks_app.diffs import diff_files, diff_files_finished, diff_totals
from tasks_app.engine.environment import setup_rows_of
from tasks_app.engine.instructions import unit_instruction_files
from tasks_app.engine.review import task_approve, task_request_changes
from tasks_app.features.line_comments import carried_comments
from tasks_app.features.model_review.verdicts import review_context
from tasks_app.models import Task, TaskRuntime, Unit
from tasks_app.selectors import (
    changes_requested_before,
    current_unit,
    stop_shown,
    unit_end_reason,
    unit_merge,
    unit_spend,
)
from tasks_app.surfaces.followup_views import followups_context, followups_live
from tasks_app.trace_html import trace_html
from tasks_app.waiting import waiting_context


def unit_context(unit: Unit) -> dict[str, object]:
    """What the page and its live partials show of ``unit`` (the same for every viewer)."""
    units = list(unit.task.units.order_by("attempt"))
    latest = current_unit(units)  # best-of-N: the round's chosen attempt
    session = unit.task.plan.session
    return {
        "unit": unit,
        "task": unit.task,
        "session": session,
        "badge": badge_for(session),
        "trace": trace_html(unit.pk),
        "units": units,
        "latest": latest,
        "spend": unit_spend(unit),
        "reason": unit_end_reason(unit, latest),
        "merge": unit_merge(unit),  # its verification on the merged tree, if any
        # A stop still to come (not one honoured): only a running unit's has a runtime row.
        "stop_asked": stop_shown(unit.task) if unit.status == "running" else "",
        **model_wait(unit),
        **review_context(unit),  # the model's review, beside the diff
        **followups_live(unit.task, unit),
    }


def model_wait(unit: Unit) -> dict[str, object]:
    """The model request the running ``unit`` waits on, for the page's "waiting for the
    model" (``tasks_app.waiting``): its age in seconds and its prompt's tokens."""
    if unit.status != "running":
        return {}
    runtime = TaskRuntime.objects.filter(task_id=unit.task_id).exclude(model_request_at=None)
    found = runtime.values_list("model_request_at", "model_request_tokens").first()
    sent, tokens = found if found is not None else (None, None)
    if sent is None:
        return {}
    return waiting_context(sent, tokens)


@require_GET
@login_required
def unit_detail(request: AuthedRequest, unit_id: int) -> HttpResponse:
    unit = get_object_or_404(
        # Its model review too: the page shows it, and a missing one costs no query.
        Unit.objects.select_related("task__plan__session__project", "model_review"),
        pk=unit_id,
    )
    project = unit.task.plan.session.project
    may_view, can_review, may_steer = may_each(
        request.user, project, Action.VIEW, Action.REVIEW_TASK, Action.STEER
    )
    if not may_view:
        require(request.user, project, Action.VIEW)  # refused, and logged
    # The diff is page-only: the live partials (state, trace) never carry it.
    finished = unit.finished_at is not None  # its patch is final: parsed once per process
    files = (diff_files_finished if finished else diff_files)(unit.checkpoint_patch)
    added, removed = diff_totals(files)
    context = unit_context(unit) | {"files": files, "added": added, "removed": removed}
    # The attempt before this one, from the task's attempts the context already read.
    units: list[Unit] = context["units"]  # type: ignore[assignment]
    previous = next((each for each in units if each.attempt == unit.attempt - 1), None)
    context |= {
        "setups": setup_rows_of(unit),
        "instructions": unit_instruction_files(unit.pk),
        "comments": unit.diff_comments.all(),
        "carried": carried_comments(previous),
        "requested": changes_requested_before(unit, previous),
        "can_review": can_review,
    }
    context |= followups_context(unit.task, unit, may_steer=may_steer)
    return render(request, "tasks_app/unit_detail.html", context)


@require_POST
@login_required
def task_review(request: AuthedRequest, task_id: int) -> HttpResponse:
    """Approve (and merge) a task in review, or request changes."""
    task = get_object_or_404(Task.objects.select_related("plan__session__project"), pk=task_id)
    require(request.user, task.plan.session.project, Action.REVIEW_TASK)
    actor = Actor.of(request.user)
    try:
        _require_latest_attempt(task, request.POST.get("unit", ""))
        if request.POST.get("action") == "approve":
            task_approve(task=task, actor=actor)
        else:
            task_request_changes(task=task, actor=actor, reason=request.POST.get("reason", ""))
    except SfError as exc:
        if request.htmx:
            # 200, so htmx swaps the message in beside the buttons (it drops 4xx bodies).
            return HttpResponse(format_html('<p class="error" role="alert">{}</p>', exc))
        return HttpResponse(str(exc), status=exc.status_code, content_type="text/plain")
    unit = current_unit(list(task.units.order_by("attempt")))
    target = reverse("unit-detail", args=[unit.pk]) if unit else reverse("task-board")
    return HttpResponseClientRedirect(target) if request.htmx else redirect(target)


def _require_latest_attempt(task: Task, unit_id: str) -> None:
    """A review sent from an attempt's page acts on that attempt only: if the task has
    moved on to a later one meanwhile (changes were requested, a retry ran), the
    person saw other work than what would be merged."""
    if not unit_id:
        return  # not from a unit page (the API, an old form): the task's current work
    if not unit_id.isdigit():
        raise InvalidTransition(f"unit must be a unit id, not {unit_id[:40]!r}")
    latest = current_unit(list(task.units.order_by("attempt")))  # best-of-N: the chosen
    if latest is None or latest.pk != int(unit_id):
        attempt = f"attempt {latest.attempt}" if latest else "no attempt"
        raise InvalidTransition(
            f"this page is stale: task {task.key} is at {attempt} now; review it there"
        )
