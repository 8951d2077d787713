"""The approvals queue: pending risk decisions, reviewed live from the dashboard."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from agents_app.access import AccessDenied, Action, may, projects_visible, require
from agents_app.gate.approvals import decision_family, decision_review
from agents_app.models import ReviewScope, ReviewStatus, RiskDecision
from sf_core.errors import SfError
from sf_core.http import AuthedRequest


def approvals_context(user: User) -> dict[str, object]:
    """The queue of the projects ``user`` may view; Approve/Reject where they may review."""
    visible = RiskDecision.objects.filter(session__project__in=projects_visible(user))
    pending = visible.filter(review_status=ReviewStatus.PENDING).select_related(
        "session", "unit__task"
    )
    recent = visible.exclude(review_status__in=[ReviewStatus.PENDING, ReviewStatus.NOT_NEEDED])
    pending_list = list(pending.order_by("created_at"))
    for decision in pending_list:  # the command family a reviewer may approve instead
        decision.family = decision_family(decision)  # type: ignore[attr-defined]
    reviewable = {
        project.pk
        for project in projects_visible(user)
        if may(user, project, Action.APPROVE_DECISION)
    }
    return {
        "pending": pending_list,
        "recent": recent.select_related("reviewed_by", "unit").order_by("-reviewed_at")[:20],
        "scopes": ReviewScope.values,
        "can_review": bool(reviewable),
        "reviewable": reviewable,
    }


@require_GET
@login_required
def approvals(request: AuthedRequest) -> HttpResponse:
    return render(request, "agents_app/approvals.html", approvals_context(request.user))


@require_POST
@login_required
def approval_review(request: AuthedRequest, decision_id: int) -> HttpResponse:
    decision = get_object_or_404(RiskDecision.objects.select_related("session"), pk=decision_id)
    require(request.user, decision.session.project, Action.VIEW)
    approve = request.POST.get("action") == "approve"
    error = ""
    try:
        decision_review(
            decision=decision,
            reviewer=request.user,
            approve=approve,
            scope=request.POST.get("scope") or ReviewScope.ONCE,
            note=request.POST.get("note", ""),
            match=request.POST.get("match") or "exact",
        )
    except AccessDenied:
        raise  # the 403 page naming the role
    except SfError as exc:
        error = str(exc)
    if not request.htmx:
        if error:
            return HttpResponse(error, status=exc_status(error), content_type="text/plain")
        return redirect("approvals")
    context = {**approvals_context(request.user), "error": error}
    return render(request, "agents_app/approvals.html#queue", context)


def exc_status(error: str) -> int:
    return 409  # not pending any more (refusals of access are the 403 page)
