"""Projects and sessions: create, show, command (the one grammar), intents, snapshot."""

from __future__ import annotations

import json
from typing import Any

from django.http import HttpRequest, HttpResponse
from ninja import Router

from agents_app.access import Action, profile_action, require, role_of
from agents_app.models import AgentSession, Project
from agents_app.services import command_run, project_create, session_create
from api_app.auth import api_user, visible_or_404, visible_projects
from api_app.idempotency import idempotent
from api_app.problems import Problem
from api_app.schemas import (
    CommandIn,
    CommandOut,
    IntentIn,
    PlanOut,
    PlanRequestOut,
    PlanUploadIn,
    ProjectIn,
    ProjectOut,
    SessionIn,
    SessionOut,
    SkillOut,
    plan_out,
    plan_request_out,
    project_out,
    session_out,
)
from sf_core.actors import Actor
from skills_app.selectors import project_skills
from tasks_app.headless.query import snapshot_of
from tasks_app.intake import plan_upload, planning_start

router = Router(tags=["projects and sessions"])
ERRORS: dict[int, type] = {400: Problem, 403: Problem, 404: Problem, 409: Problem, 422: Problem}


@router.get("/projects", response=list[ProjectOut])
def projects_list(request: HttpRequest) -> list[ProjectOut]:
    user = api_user(request)
    return [project_out(p, role_of(user, p)) for p in visible_projects(request).order_by("name")]


@router.post("/projects", response={201: ProjectOut, **ERRORS})
def projects_create(request: HttpRequest, data: ProjectIn) -> HttpResponse:
    user = api_user(request)
    require(user, None, Action.REGISTER_REPOSITORY)

    def create() -> ProjectOut:
        project = project_create(
            name=data.name,
            repo_path=data.repo_path,
            base_branch=data.base_branch,
            policy=data.policy,
            created_by=user,
        )
        return project_out(project, role_of(user, project))

    return idempotent(request, data.model_dump(), create)


@router.get("/projects/{project_id}", response={200: ProjectOut, **ERRORS})
def project_show(request: HttpRequest, project_id: int) -> ProjectOut:
    project = visible_or_404(request, Project.objects.all(), project_id, "")
    return project_out(project, role_of(api_user(request), project))


@router.get("/projects/{project_id}/skills", response={200: list[SkillOut], **ERRORS})
def project_skills_list(request: HttpRequest, project_id: int) -> list[SkillOut]:
    project = visible_or_404(request, Project.objects.all(), project_id, "")
    return [SkillOut.from_orm(skill) for skill in project_skills(project)]


@router.post("/sessions", response={201: SessionOut, **ERRORS})
def sessions_create(request: HttpRequest, data: SessionIn) -> HttpResponse:
    user = api_user(request)
    project = visible_or_404(request, Project.objects.all(), data.project_id, "")
    require(user, project, Action.CREATE_SESSION)
    profile = data.axes.get("permission_profile")
    if profile:  # a session created at trusted or unrestricted is a raise to it
        require(user, project, profile_action(profile))

    def create() -> SessionOut:
        session = session_create(project=project, created_by=user, title=data.title, axes=data.axes)
        return session_out(session)

    return idempotent(request, data.model_dump(), create)


def _session(request: HttpRequest, session_id: int) -> AgentSession:
    queryset = AgentSession.objects.select_related("project")
    return visible_or_404(request, queryset, session_id, "project")


@router.get("/sessions/{session_id}", response={200: SessionOut, **ERRORS})
def session_show(request: HttpRequest, session_id: int) -> SessionOut:
    return session_out(_session(request, session_id))


@router.post("/sessions/{session_id}/commands", response={200: CommandOut, **ERRORS})
def session_command(request: HttpRequest, session_id: int, data: CommandIn) -> HttpResponse:
    """One command of the grammar the command bar, CLI and headless share (``/mode build
    --autonomous``, ``/steer …``, ``/pause``); the role it needs is the service's to judge."""
    session = _session(request, session_id)
    actor = Actor.of(api_user(request))

    def create() -> CommandOut:
        outcome = command_run(session=session, text=data.text, actor=actor)
        transition = outcome.transition
        return CommandOut(
            session=session_out(outcome.session),
            message=outcome.message,
            transition_id=transition.pk if transition is not None else None,
            pending=outcome.pending,
            data=_jsonable(outcome.data),
        )

    return idempotent(request, data.model_dump(), create, status=200)


def _jsonable(data: dict[str, Any]) -> dict[str, Any]:
    return dict(json.loads(json.dumps(data, default=str)))


@router.post("/sessions/{session_id}/intents", response={202: PlanRequestOut, **ERRORS})
def session_intent(request: HttpRequest, session_id: int, data: IntentIn) -> HttpResponse:
    """Plan an intent on a worker: the answer is the plan request (``planning``); its
    ``plan_id`` appears when planning is done (poll ``GET /api/plan-requests/{id}``)."""
    session = _session(request, session_id)
    user = api_user(request)
    require(user, session.project, Action.STATE_INTENT)

    def create() -> PlanRequestOut:
        plan_request = planning_start(
            session=session, intent=data.intent, actor=Actor.of(user), replay=data.replay
        )
        return plan_request_out(plan_request)

    return idempotent(request, data.model_dump(), create, status=202)


@router.post("/sessions/{session_id}/plans", response={201: PlanOut, **ERRORS})
def session_plan_upload(request: HttpRequest, session_id: int, data: PlanUploadIn) -> HttpResponse:
    """A plan file's text (YAML, JSON or Markdown), checked as ``sf plan import`` does."""
    session = _session(request, session_id)
    require(api_user(request), session.project, Action.STATE_INTENT)

    def create() -> PlanOut:
        return plan_out(plan_upload(session=session, name=data.name, content=data.content.encode()))

    return idempotent(request, data.model_dump(), create)


@router.get("/sessions/{session_id}/snapshot", response={200: dict[str, Any], **ERRORS})
def session_snapshot(request: HttpRequest, session_id: int) -> dict[str, Any]:
    """What ``sf headless query`` prints for the session."""
    return _jsonable(snapshot_of(_session(request, session_id)))
