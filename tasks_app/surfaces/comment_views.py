"""Line comments on the unit page's diff: the form for one line, adding a comment,
marking one addressed. Only reviewers (``Action.REVIEW_TASK``) may do either."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse, QueryDict
from django.shortcuts import get_object_or_404, render
from django.utils.html import format_html
from django.views.decorators.http import require_GET, require_POST

from agents_app.access import Action, require
from sf_core.actors import Actor
from sf_core.errors import SfError
from sf_core.http import AuthedRequest
from tasks_app.features.line_comments import (
    carried_comments,
    diff_comment_address,
    diff_comment_create,
    diff_line_text,
)
from tasks_app.models import DiffComment, Unit
from tasks_app.selectors import changes_requested_before

PAGE = "tasks_app/unit_detail.html"


def _unit(unit_id: int) -> Unit:
    return get_object_or_404(
        Unit.objects.select_related("task__plan__session__project"), pk=unit_id
    )


def _line_args(data: QueryDict) -> tuple[str, int, str]:
    """(path, line, side) of a form; a bad line number is 0, which no diff shows."""
    try:
        line = int(data.get("line", ""))
    except ValueError:
        line = 0
    return data.get("path", ""), line, data.get("side", "new")


@require_GET
@login_required
def diff_comment_form(request: AuthedRequest, unit_id: int) -> HttpResponse:
    """The comment form for one line, as a table row under it."""
    unit = _unit(unit_id)
    require(request.user, unit.task.plan.session.project, Action.REVIEW_TASK)
    path, line, side = _line_args(request.GET)
    if diff_line_text(unit, path=path, line=line, side=side) is None:
        return HttpResponse(
            format_html('<p class="error" role="alert">no line {}:{}</p>', path, line)
        )
    context = {"unit": unit, "path": path, "line": line, "side": side}
    return render(request, f"{PAGE}#diff-comment-form", context)


@require_POST
@login_required
def diff_comment_add(request: AuthedRequest, unit_id: int) -> HttpResponse:
    unit = _unit(unit_id)
    require(request.user, unit.task.plan.session.project, Action.REVIEW_TASK)
    path, line, side = _line_args(request.POST)
    try:
        diff_comment_create(
            unit=unit,
            path=path,
            line=line,
            side=side,
            text=request.POST.get("text", ""),
            actor=Actor.of(request.user),
        )
        error = ""
    except SfError as exc:
        error = str(exc)
    context = {
        "unit": unit,
        "comments": unit.diff_comments.all(),
        "can_review": True,
        "error": error,
    }
    return render(request, f"{PAGE}#diff-comments", context)


@require_POST
@login_required
def diff_comment_addressed(request: AuthedRequest, comment_id: int) -> HttpResponse:
    comment = get_object_or_404(
        DiffComment.objects.select_related("unit__task__plan__session__project"), pk=comment_id
    )
    require(request.user, comment.unit.task.plan.session.project, Action.REVIEW_TASK)
    diff_comment_address(comment=comment, actor=Actor.of(request.user))
    unit = Unit.objects.get(task_id=comment.unit.task_id, attempt=comment.unit.attempt + 1)
    context = {
        "unit": unit,
        "carried": carried_comments(comment.unit),
        "requested": changes_requested_before(unit, previous=comment.unit),
        "can_review": True,
    }
    return render(request, f"{PAGE}#carried-comments", context)
