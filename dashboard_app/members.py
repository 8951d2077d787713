"""A project's members page: list, add by username with a role, change a role, remove.

Admins of the project only (``access.Action.MANAGE_MEMBERS``); the services refuse
to leave a project without an admin.
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods

from agents_app.access import AccessDenied, Action, require
from agents_app.models import Project, ProjectMembership, Role
from agents_app.services import member_add, member_remove, member_set_role
from sf_core.actors import Actor
from sf_core.errors import SfError
from sf_core.http import AuthedRequest

MEMBER_ACTIONS = ("add", "role", "remove")


@require_http_methods(["GET", "POST"])
@login_required
def project_members(request: AuthedRequest, project_id: int) -> HttpResponse:
    project = get_object_or_404(Project, pk=project_id)
    require(request.user, project, Action.MANAGE_MEMBERS)
    error = ""
    if request.method == "POST":
        try:
            _apply(request, project)
        except AccessDenied:
            raise
        except SfError as exc:
            error = str(exc)
        else:
            return redirect("project-members", project_id=project.pk)
    context = {
        "project": project,
        "members": ProjectMembership.objects.filter(project=project).select_related("user"),
        "roles": Role.values,
        "error": error,
    }
    return render(request, "dashboard_app/members.html", context, status=400 if error else 200)


def _apply(request: AuthedRequest, project: Project) -> None:
    action = request.POST.get("action", "")
    username = request.POST.get("username", "").strip()
    role = request.POST.get("role", "")
    actor = Actor.of(request.user)
    if not username:
        raise SfError("give a username")
    if action == "add":
        member_add(project=project, username=username, role=role, actor=actor)
    elif action == "role":
        member_set_role(project=project, username=username, role=role, actor=actor)
    elif action == "remove":
        member_remove(project=project, username=username, actor=actor)
    else:
        raise SfError(f"unknown action {action!r}; accepted: {', '.join(MEMBER_ACTIONS)}")
