"""The follow-up form of the unit page and of the board (docs/follow-ups.md): one POST
that calls ``features.followups.services.followup_send`` and answers with the part of
the page that posted it — the unit page's follow-ups, or the board — with the refusal's
words when the service refused."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.db.models import QuerySet
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from agents_app.access import Action, may, projects_visible, require
from sf_core.actors import Actor
from sf_core.errors import SfError
from sf_core.http import AuthedRequest
from tasks_app.features.followups.services import (
    FollowUpInvalid,
    followup_offer,
    followup_send,
)
from tasks_app.models import MAX_FOLLOWUP_CHARS, FollowUp, Task, Unit
from tasks_app.surfaces import views


def followups_live(task: Task, unit: Unit | None) -> dict[str, object]:
    """The follow-up section's live parts (the same for every viewer): the messages and
    what one sent now does (``followup_offer``)."""
    return {"followups": task_followups(task), "offer": followup_offer(task, unit)}


def followups_context(task: Task, unit: Unit | None, *, may_steer: bool) -> dict[str, object]:
    """What the unit page's follow-up section shows of ``task`` (``may_steer``: the
    person's role lets them send one; read with the page's other role checks). The
    form is there whatever the task's status: its live part says when none can go."""
    return followups_live(task, unit) | {
        "can_follow_up": may_steer,
        "followup_max": MAX_FOLLOWUP_CHARS,
    }


def task_followups(task: Task) -> QuerySet[FollowUp]:
    return FollowUp.objects.filter(task=task).select_related("unit", "delivered_unit")


@require_POST
@login_required
def task_followup_view(request: AuthedRequest, task_id: int) -> HttpResponse:
    """Send the form's ``text`` to the task (or to its running ``unit``)."""
    task = get_object_or_404(Task.objects.select_related("plan__session__project"), pk=task_id)
    require(request.user, task.plan.session.project, Action.VIEW)
    error, sent = "", ""
    try:
        unit = _posted_unit(task, request.POST.get("unit", ""))
        result = followup_send(
            text=request.POST.get("text", ""), actor=Actor.of(request.user), task=task, unit=unit
        )
        sent = result.delivery
    except SfError as exc:  # AccessDenied too: the words name the role it needs
        error = str(exc)
    if request.POST.get("from") == "board":
        return _board(request, task, error, sent)
    if not request.htmx:
        latest = task.units.order_by("-attempt").first()
        return redirect(reverse("unit-detail", args=[latest.pk]) if latest else "task-board")
    task.refresh_from_db()
    unit = _shown_unit(task, request.POST.get("unit", ""))
    may_steer = may(request.user, task.plan.session.project, Action.STEER)
    context = followups_context(task, unit, may_steer=may_steer) | {
        "task": task,
        "unit": unit,
        "followup_error": error,
        "followup_sent": sent,
    }
    # 200 with the error in it: htmx swaps in what it is told (it drops 4xx bodies).
    return render(request, "tasks_app/_followups.html", context)


def _posted_unit(task: Task, unit_id: str) -> Unit | None:
    if not unit_id:
        return None
    if not unit_id.isdigit():
        raise FollowUpInvalid(f"unit must be a unit id, not {unit_id[:40]!r}")
    unit = Unit.objects.filter(pk=int(unit_id)).first()
    if unit is None or unit.task_id != task.pk:
        raise FollowUpInvalid(f"unit {unit_id} is not an attempt of task {task.key}")
    return unit


def _shown_unit(task: Task, unit_id: str) -> Unit | None:
    """The unit whose page posted the form (its running state decides the form)."""
    found = task.units.filter(pk=int(unit_id)).first() if unit_id.isdigit() else None
    return found or task.units.order_by("-attempt").first()


def _board(request: AuthedRequest, task: Task, error: str, sent: str) -> HttpResponse:
    """The board, filtered and on the page it was, with what happened."""
    if not request.htmx:
        return redirect(f"{reverse('task-board')}?session={task.plan.session_id}")
    session_id, statuses = views.board_filters(
        request.GET.get("session"), request.GET.getlist("status")
    )
    session = views.board_session(request, session_id)
    visible = projects_visible(request.user)
    context = views.board_context(session, statuses, visible, page=request.GET.get("page"))
    context["error"] = error
    context["notice"] = f"{task.key}: follow-up sent: {sent}" if sent else ""
    return render(request, "tasks_app/board.html#board", context)
