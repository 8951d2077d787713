"""Views of projects and sessions: interfaces that parse input, call a service, render."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from agents_app.access import (
    AccessDenied,
    Action,
    may,
    profile_action,
    projects_visible,
    repo_roots,
    require,
    role_of,
)
from agents_app.axes import AXIS_CHOICES
from agents_app.badge import badge_for
from agents_app.commands import CONFIRM, ConfirmationRequired
from agents_app.costs import unpriced_models
from agents_app.forms import CommandForm, ProjectForm, SessionForm
from agents_app.models import AgentSession, ModeTransition, Project
from agents_app.preflight import PLANNING_MODE, preflight
from agents_app.selectors import session_list, session_pending, session_timeline
from agents_app.services import (
    command_run,
    project_create,
    session_create,
    transition_approve,
    transition_cancel,
)
from sf_core.actors import Actor
from sf_core.errors import SfError
from sf_core.http import AuthedRequest

# The axis controls post the same commands a person would type.
AXIS_COMMANDS = {
    "work_mode": "/mode",
    "run_control": "/control",
    "permission_profile": "/permission-profile",
    "model_mode": "/model-mode",
}


@require_http_methods(["GET", "POST"])
@login_required
def project_list(request: AuthedRequest) -> HttpResponse:
    form = ProjectForm(request.POST or None)
    error = ""
    if request.method == "POST":
        require(request.user, None, Action.REGISTER_REPOSITORY)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            project = project_create(
                name=data["name"],
                repo_path=data["repo_path"],
                base_branch=data["base_branch"],
                policy={"repair_policy": data["repair_policy"]},
                created_by=request.user,
            )
        except SfError as exc:
            error = str(exc)
        else:
            return redirect("project-detail", project_id=project.pk)
    status = 400 if request.method == "POST" else 200
    context = {
        "projects": projects_visible(request.user),
        "form": form,
        "error": error,
        "may_register": may(request.user, None, Action.REGISTER_REPOSITORY),
        "repo_roots": repo_roots(),
    }
    return render(request, "agents_app/project_list.html", context, status=status)


@require_http_methods(["GET", "POST"])
@login_required
def project_detail(request: AuthedRequest, project_id: int) -> HttpResponse:
    project = get_object_or_404(Project, pk=project_id)
    require(request.user, project, Action.VIEW)
    form = SessionForm(request.POST or None)
    if request.method == "POST":
        require(request.user, project, Action.CREATE_SESSION)
    if request.method == "POST" and form.is_valid():
        data = dict(form.cleaned_data)
        # A session created at trusted or unrestricted is a raise to it.
        require(request.user, project, profile_action(data["permission_profile"]))
        title = data.pop("title")
        session = session_create(
            project=project,
            created_by=request.user,
            title=title,
            axes=data,
        )
        return redirect("session-detail", session_id=session.pk)
    context = {
        "project": project,
        "sessions": session_list(project=project),
        "form": form,
        # The intent box posts to the tasks app (named by URL; this app never imports it).
        "intent_url": reverse("project-intent", args=[project.pk]),
        "preflight": preflight(PLANNING_MODE),
        "role": role_of(request.user, project),
    }
    status = 400 if request.method == "POST" else 200
    return render(request, "agents_app/project_detail.html", context, status=status)


@require_GET
@login_required
def session_detail(request: AuthedRequest, session_id: int) -> HttpResponse:
    session = get_object_or_404(AgentSession.objects.select_related("project"), pk=session_id)
    require(request.user, session.project, Action.VIEW)
    return render(request, "agents_app/session_detail.html", session_context(session))


@require_POST
@login_required
def session_command(request: AuthedRequest, session_id: int) -> HttpResponse:
    session = _session_to_steer(request, session_id)
    form = CommandForm(request.POST)
    if not form.is_valid():
        return _command_result(request, session, error="type a command, e.g. /status")
    return _run(request, session, form.cleaned_data["text"])


@require_POST
@login_required
def session_axis(request: AuthedRequest, session_id: int) -> HttpResponse:
    """One axis control (select or button): the equivalent command, typed for the person."""
    session = _session_to_steer(request, session_id)
    axis, value = request.POST.get("axis", ""), request.POST.get("value", "")
    if axis not in AXIS_COMMANDS:
        return _command_result(
            request, session, error=f"unknown axis {axis!r}; accepted: {', '.join(AXIS_COMMANDS)}"
        )
    return _run(request, session, f"{AXIS_COMMANDS[axis]} {value}")


@require_POST
@login_required
def transition_action(request: AuthedRequest, transition_id: int, action: str) -> HttpResponse:
    if action not in ("approve", "cancel"):
        raise Http404(f"unknown action {action!r}")
    transition = get_object_or_404(
        ModeTransition.objects.select_related("session__project"), pk=transition_id
    )
    act = transition_approve if action == "approve" else transition_cancel
    require(request.user, transition.session.project, Action.VIEW)
    try:
        act(transition=transition, actor=Actor.of(request.user))
    except AccessDenied:
        raise  # the 403 page, not the command bar's inline error
    except SfError as exc:
        return _command_result(request, transition.session, error=str(exc))
    if request.htmx:
        return _command_result(request, transition.session, message=f"transition {PAST[action]}")
    return redirect("session-detail", session_id=transition.session_id)


PAST = {"approve": "approved", "cancel": "cancelled"}  # "cancel" + "d" read "canceld"


def _session_to_steer(request: AuthedRequest, session_id: int) -> AgentSession:
    """The session, if the person may at least view it; what a command needs beyond
    that is the command service's to judge (``access.command_action``)."""
    session = get_object_or_404(AgentSession.objects.select_related("project"), pk=session_id)
    require(request.user, session.project, Action.VIEW)
    return session


def session_context(session: AgentSession) -> dict[str, object]:
    return {
        "session": session,
        "timeline": session_timeline(session),
        "pending": session_pending(session),
        "badge": badge_for(session),
        "unpriced_models": unpriced_models(session),
        "axis_controls": [
            {
                "axis": axis,
                "label": axis.replace("_", " ").capitalize(),
                "values": AXIS_CHOICES[axis].values,
                "current": getattr(session, axis),
            }
            for axis in AXIS_COMMANDS
        ],
    }


def _run(request: AuthedRequest, session: AgentSession, text: str) -> HttpResponse:
    try:
        outcome = command_run(session=session, text=text, actor=Actor.of(request.user))
    except AccessDenied:
        raise  # the 403 page, not the command bar's inline error
    except ConfirmationRequired as exc:  # the bar asks: a button runs the confirmed command
        return _command_result(request, session, error=str(exc), text=exc.confirm_text)
    except SfError as exc:
        return _command_result(request, session, error=str(exc), text=text)
    if not request.htmx:
        return redirect("session-detail", session_id=session.pk)
    return _command_result(request, outcome.session, message=outcome.message, text=text)


def _command_result(
    request: AuthedRequest,
    session: AgentSession,
    *,
    message: str = "",
    error: str = "",
    text: str = "",
) -> HttpResponse:
    """The command bar's answer, swapped in place by htmx. htmx gets 200 so that it
    shows the inline error; other clients get 400 with the error as text."""
    if not request.htmx:
        if error:
            return HttpResponse(error, status=400, content_type="text/plain")
        return redirect("session-detail", session_id=session.pk)
    context = {
        "session": session,
        "message": message,
        "error": error,
        "text": text,
        "confirm": text.endswith(f" {CONFIRM}") and bool(error),
    }
    return render(request, "agents_app/session_detail.html#command-result", context)
