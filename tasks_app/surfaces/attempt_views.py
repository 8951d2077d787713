"""Best-of-N: a task's attempts side by side (each one's variant, verification, diff
stat, diff and cost; the round's choice and its reason), and a person's pick of another
(docs/best-of-n.md)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from agents_app.access import Action, may_each, require
from sf_core.actors import Actor
from sf_core.errors import SfError
from sf_core.http import AuthedRequest
from tasks_app.diffs import diff_files_finished, diff_totals
from tasks_app.engine.attempt_choice import attempt_pick
from tasks_app.models import AttemptRound, MergeRequest, MergeStatus, Task, Unit
from tasks_app.ranking import variant_label


def _task(task_id: int) -> Task:
    return get_object_or_404(Task.objects.select_related("plan__session__project"), pk=task_id)


def attempts_context(task: Task) -> dict[str, Any]:
    """The task's rounds, newest first, each with its attempts' columns."""
    rounds = []
    for round_ in task.rounds.select_related("winner").order_by("-pk"):
        columns = [_column(unit, round_) for unit in round_.attempts.order_by("attempt")]
        cost = sum((column["unit"].cost for column in columns), Decimal(0))
        rounds.append({"round": round_, "columns": columns, "cost": cost})
    merged = MergeRequest.objects.filter(task=task, status=MergeStatus.MERGED).exists()
    return {"task": task, "session": task.plan.session, "rounds": rounds, "merged": merged}


def _column(unit: Unit, round_: AttemptRound) -> dict[str, Any]:
    files = diff_files_finished(unit.checkpoint_patch) if unit.finished_at else []
    added, removed = diff_totals(files)
    ranked = ((i, row) for i, row in enumerate(round_.ranking, 1) if row.get("unit") == unit.pk)
    found: tuple[int | None, dict[str, Any]] = next(ranked, (None, {}))
    rank, row = found
    return {
        "unit": unit,
        "variant": variant_label(unit.variant),
        "files": files,
        "added": added,
        "removed": removed,
        "rank": rank,
        "verdict": row.get("verdict"),  # the model review's, as the ranking read it
        "chosen": round_.winner_id == unit.pk,
    }


@require_GET
@login_required
def task_attempts_view(request: AuthedRequest, task_id: int) -> HttpResponse:
    task = _task(task_id)
    return _page(request, task)


def _page(request: AuthedRequest, task: Task, error: str = "", status: int = 200) -> HttpResponse:
    project = task.plan.session.project
    may_view, can_pick = may_each(request.user, project, Action.VIEW, Action.REVIEW_TASK)
    if not may_view:
        require(request.user, project, Action.VIEW)  # refused, and logged
    context = attempts_context(task) | {"can_pick": can_pick, "error": error}
    return render(request, "tasks_app/attempts.html", context, status=status)


@require_POST
@login_required
def attempt_pick_view(request: AuthedRequest, task_id: int, unit_id: int) -> HttpResponse:
    """A reviewer keeps another attempt of the task's round before it is merged."""
    task = _task(task_id)
    require(request.user, task.plan.session.project, Action.REVIEW_TASK)
    unit = get_object_or_404(Unit, pk=unit_id, task=task)
    try:
        attempt_pick(unit=unit, actor=Actor.of(request.user), note=request.POST.get("note", ""))
    except SfError as exc:
        return _page(request, task, error=str(exc), status=exc.status_code)
    return redirect(reverse("task-attempts", args=[task.pk]))
