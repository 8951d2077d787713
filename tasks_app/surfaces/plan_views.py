"""Editing and rejecting a proposed plan on its page (the lint is shown beside each task:
``views._plan_context``)."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from agents_app.access import Action, require
from sf_core.actors import Actor
from sf_core.errors import SfError
from sf_core.http import AuthedRequest
from tasks_app.models import Plan
from tasks_app.plan_edit import plan_edit
from tasks_app.services import plan_reject
from tasks_app.surfaces.views import plan_context

MAX_REASON = 2_000


@require_POST
@login_required
def plan_edit_view(request: AuthedRequest, plan_id: int) -> HttpResponse:
    """**Save** the edited plan document; its errors, by location, above the editor."""
    plan = get_object_or_404(Plan.objects.select_related("session__project"), pk=plan_id)
    require(request.user, plan.session.project, Action.ACCEPT_PLAN)
    text = request.POST.get("document", "")
    try:
        plan_edit(plan=plan, text=text, actor=Actor.of(request.user))
    except SfError as exc:
        context = {**plan_context(plan), "edit_error": str(exc), "document": text}
        return render(request, "tasks_app/plan_detail.html", context, status=400)
    return redirect("plan-detail", plan_id=plan.pk)


@require_POST
@login_required
def plan_reject_view(request: AuthedRequest, plan_id: int) -> HttpResponse:
    """**Reject** with a reason: kept on the plan, shown, told to the planner next time."""
    plan = get_object_or_404(Plan.objects.select_related("session__project"), pk=plan_id)
    require(request.user, plan.session.project, Action.ACCEPT_PLAN)
    reason = request.POST.get("reason", "").strip()
    try:
        if not reason:
            raise SfError("say why the plan is rejected: the planner is told when it plans again")
        if len(reason) > MAX_REASON:
            raise SfError(f"the reason is longer than {MAX_REASON} characters")
        plan_reject(plan=plan, reason=reason, rejected_by=request.user)
    except SfError as exc:
        context = {**plan_context(plan), "reject_error": str(exc)}
        return render(request, "tasks_app/plan_detail.html", context, status=400)
    return redirect("plan-detail", plan_id=plan.pk)
