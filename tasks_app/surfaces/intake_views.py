"""The intent box (project and session pages) and plan upload: parse, call a service
(``tasks_app.intake``), render the form again with the error inline, or the result."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.html import escape
from django.views.decorators.http import require_POST
from django_htmx.http import HttpResponseClientRedirect

from agents_app.access import Action, require
from agents_app.models import AgentSession, Project
from agents_app.preflight import PLANNING_MODE, preflight
from sf_core.actors import Actor
from sf_core.errors import SfError
from sf_core.http import AuthedRequest
from tasks_app.features.demo import demo_start
from tasks_app.features.issues.texts import FORGE_NAMES
from tasks_app.intake import plan_upload, planning_start, project_intent_start
from tasks_app.models import ForgeIssue
from tasks_app.selectors import session_plan_requests, session_plans

INTENT_BOX = "agents_app/_intent_box.html"
UPLOAD_FORM = "tasks_app/_session_plans.html#upload-form"


def intent_box_context(action: str, *, replay_trace: str = "", **extra: Any) -> dict[str, object]:
    """What the intent box renders: where it posts and the planning pre-flight."""
    return {
        "intent_url": action,
        "preflight": preflight(PLANNING_MODE, replay_trace=replay_trace),
        **extra,
    }


def session_plans_context(session: AgentSession, **extra: Any) -> dict[str, object]:
    """The session page's plans slot: the forge issue the session works from (if any),
    intent box, plan requests, plans, upload."""
    issue = ForgeIssue.objects.filter(session_id=session.pk).first()
    return {
        "session": session,
        "forge_issue": issue,
        "forge_name": FORGE_NAMES.get(issue.kind, issue.kind) if issue else "",
        "plans": session_plans(session.pk),
        "plan_requests": session_plan_requests(session.pk),
        **intent_box_context(
            reverse("session-intent", args=[session.pk]), replay_trace=session.replay_trace
        ),
        **extra,
    }


@require_POST
@login_required
def project_intent_view(request: AuthedRequest, project_id: int) -> HttpResponse:
    """ "What do you want?" on the project page: a new session that starts planning."""
    project = get_object_or_404(Project, pk=project_id)
    require(request.user, project, Action.STATE_INTENT)
    intent, replay = request.POST.get("intent", ""), request.POST.get("replay", "")
    try:
        plan_request = project_intent_start(
            project=project, intent=intent, actor=Actor.of(request.user), replay=replay
        )
    except SfError as exc:
        action = reverse("project-intent", args=[project.pk])
        context = intent_box_context(action, intent_error=str(exc), intent=intent, replay=replay)
        return render(request, INTENT_BOX, context, status=200 if request.htmx else 400)
    page = reverse("session-detail", args=[plan_request.session_id])
    return HttpResponseClientRedirect(page) if request.htmx else redirect(page)


@require_POST
@login_required
def session_intent_view(request: AuthedRequest, session_id: int) -> HttpResponse:
    """The session page's intent box: planning starts; the plan list follows live."""
    session = get_object_or_404(AgentSession.objects.select_related("project"), pk=session_id)
    require(request.user, session.project, Action.STATE_INTENT)
    intent, replay = request.POST.get("intent", ""), request.POST.get("replay", "")
    action = reverse("session-intent", args=[session.pk])
    try:
        planning_start(session=session, intent=intent, actor=Actor.of(request.user), replay=replay)
    except SfError as exc:
        context = intent_box_context(
            action,
            replay_trace=session.replay_trace,
            intent_error=str(exc),
            intent=intent,
            replay=replay,
        )
        return _answer(request, session, INTENT_BOX, context)
    session.refresh_from_db()
    message = "Planning… the plan appears below."
    context = intent_box_context(action, replay_trace=session.replay_trace, intent_message=message)
    return _answer(request, session, INTENT_BOX, context)


@require_POST
@login_required
def demo_replay_view(request: AuthedRequest) -> HttpResponse:
    """**Replay the demo**: a fresh demo project whose session plans from the trace."""
    try:
        plan_request = demo_start(actor=Actor.of(request.user))
    except SfError as exc:
        message = f"The demo could not start: {exc}"
        if request.htmx:  # swapped in as HTML beside the button
            return HttpResponse(escape(message))
        return HttpResponse(message, status=400, content_type="text/plain")
    page = reverse("session-detail", args=[plan_request.session_id])
    return HttpResponseClientRedirect(page) if request.htmx else redirect(page)


@require_POST
@login_required
def plan_upload_view(request: AuthedRequest, session_id: int) -> HttpResponse:
    """A plan file (YAML, JSON or Markdown) checked as ``sf plan import`` checks one."""
    session = get_object_or_404(AgentSession.objects.select_related("project"), pk=session_id)
    require(request.user, session.project, Action.STATE_INTENT)
    upload = request.FILES.get("plan_file")
    context: dict[str, object] = {"session": session}
    if upload is None:
        context["upload_error"] = "choose a plan file (.yaml, .json or .md) to upload"
    else:
        try:
            plan = plan_upload(session=session, name=upload.name or "", content=upload.read())
        except SfError as exc:
            context["upload_error"] = str(exc)
        else:
            context["upload_message"] = f"Plan {plan.pk} imported from {upload.name}."
            context["uploaded_plan"] = plan
    return _answer(request, session, UPLOAD_FORM, context)


def _answer(
    request: AuthedRequest, session: AgentSession, template: str, context: dict[str, object]
) -> HttpResponse:
    """htmx: the form alone (the list follows live); otherwise the session page."""
    if request.htmx:
        return render(request, template, context)
    failed = any(key.endswith("_error") for key in context)
    if failed:
        return render(
            request,
            "tasks_app/_session_plans.html",
            session_plans_context(session, **context),
            status=400,
        )
    return redirect("session-detail", session_id=session.pk)
