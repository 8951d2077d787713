"""The skills pages of a project: the list (with **Sync now**), one skill, one of its
supporting files. Interfaces: check access, call a selector or the sync, render."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from agents_app.access import Action, may, require
from agents_app.models import Project
from sf_core.http import AuthedRequest
from skills_app.markdown import markdown_html
from skills_app.models import Skill
from skills_app.selectors import (
    project_proposals,
    skill_file_text,
    skill_of,
    skill_rows,
    skill_runs,
    skill_text,
    skill_uses,
)
from skills_app.sync import skills_sync


@require_GET
@login_required
def project_skills_view(request: AuthedRequest, project_id: int) -> HttpResponse:
    project = _visible_project(request, project_id)
    context = _list_context(request, project)
    return render(request, "skills_app/skills.html", context)


@require_POST
@login_required
def project_skills_sync_view(request: AuthedRequest, project_id: int) -> HttpResponse:
    """**Sync now**: the project's folder and the user folder, as a unit would. A folder
    that cannot be read is said on the page; the rows synced last stay."""
    project = _visible_project(request, project_id)
    require(request.user, project, Action.SYNC_SKILLS)
    reports, errors = skills_sync(project)
    if not request.htmx:
        return redirect("project-skills", project_id=project.pk)
    context = {**_list_context(request, project), "reports": reports, "error": "; ".join(errors)}
    return render(request, "skills_app/skills.html#skills-list", context)


@require_GET
@login_required
def skill_detail_view(request: AuthedRequest, project_id: int, name: str) -> HttpResponse:
    project = _visible_project(request, project_id)
    skill = _skill(project, name)
    body, body_problem = skill_text(project, skill) if skill.valid else ("", "")
    context = {
        "project": project,
        "skill": skill,
        "body_html": markdown_html(body) if body else "",
        "body_problem": body_problem,
        "uses": skill_uses(skill),
        "cases": list(skill.eval_cases.all()),
        "runs": skill_runs(skill),
        "proposals": project_proposals(project),
    }
    return render(request, "skills_app/skill_detail.html", context)


@require_GET
@login_required
def skill_file_view(request: AuthedRequest, project_id: int, name: str, file: str) -> HttpResponse:
    project = _visible_project(request, project_id)
    skill = _skill(project, name)
    text = skill_file_text(project, skill, file)
    if text is None:
        raise Http404(f"skill {name!r} has no supporting file {file!r}")
    context = {"project": project, "skill": skill, "file": file, "text": text}
    return render(request, "skills_app/skill_file.html", context)


def _visible_project(request: AuthedRequest, project_id: int) -> Project:
    project = get_object_or_404(Project, pk=project_id)
    require(request.user, project, Action.VIEW)
    return project


def _skill(project: Project, name: str) -> Skill:
    skill = skill_of(project, name)
    if skill is None:
        raise Http404(f"no skill named {name!r} in project {project.name!r}")
    return skill


def _list_context(request: AuthedRequest, project: Project) -> dict[str, object]:
    rows = skill_rows(project)
    return {
        "project": project,
        "rows": rows,
        "modes": sorted({mode for row in rows for mode in row.last_eval}),
        "invalid": [row.skill for row in rows if not row.skill.valid and not row.skill.removed_at],
        "may_sync": may(request.user, project, Action.SYNC_SKILLS),
        "proposals": project_proposals(project),
        "may_decide": may(request.user, project, Action.ACCEPT_PLAN),
    }
