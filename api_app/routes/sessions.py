"""Projects and sessions: create, show, command (the one grammar), intents, snapshot.

Each route parses the request and calls one operation (``api_app.operations``), the
function the MCP server's tool calls too."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from ninja import Router

from api_app.auth import api_token
from api_app.idempotency import KEY_PARAM, idempotent
from api_app.operations import projects as ops
from api_app.problems import ERRORS
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
)

router = Router(tags=["projects and sessions"])


@router.get("/projects", response=list[ProjectOut])
def projects_list(request: HttpRequest) -> list[ProjectOut]:
    return ops.projects_list(token=api_token(request))


@router.post("/projects", response={201: ProjectOut, **ERRORS})
def projects_create(
    request: HttpRequest, data: ProjectIn, key: str | None = KEY_PARAM
) -> HttpResponse:
    token = api_token(request)
    return idempotent(request, key, data, lambda: ops.project_register(token=token, data=data))


@router.get("/projects/{project_id}", response={200: ProjectOut, **ERRORS})
def project_show(request: HttpRequest, project_id: int) -> ProjectOut:
    return ops.project_show(token=api_token(request), project_id=project_id)


@router.get("/projects/{project_id}/skills", response={200: list[SkillOut], **ERRORS})
def project_skills_list(request: HttpRequest, project_id: int) -> list[SkillOut]:
    return ops.project_skills_list(token=api_token(request), project_id=project_id)


@router.post("/sessions", response={201: SessionOut, **ERRORS})
def sessions_create(
    request: HttpRequest, data: SessionIn, key: str | None = KEY_PARAM
) -> HttpResponse:
    token = api_token(request)
    return idempotent(request, key, data, lambda: ops.session_open(token=token, data=data))


@router.get("/sessions/{session_id}", response={200: SessionOut, **ERRORS})
def session_show(request: HttpRequest, session_id: int) -> SessionOut:
    return ops.session_show(token=api_token(request), session_id=session_id)


@router.post("/sessions/{session_id}/commands", response={200: CommandOut, **ERRORS})
def session_command(
    request: HttpRequest, session_id: int, data: CommandIn, key: str | None = KEY_PARAM
) -> HttpResponse:
    """One command of the grammar the command bar, CLI and headless share (``/mode build
    --autonomous``, ``/steer …``, ``/pause``); the role it needs is the service's to judge."""
    token = api_token(request)

    def create() -> CommandOut:
        return ops.session_command(token=token, session_id=session_id, text=data.text)

    return idempotent(request, key, data, create, status=200)


@router.post("/sessions/{session_id}/intents", response={202: PlanRequestOut, **ERRORS})
def session_intent(
    request: HttpRequest, session_id: int, data: IntentIn, key: str | None = KEY_PARAM
) -> HttpResponse:
    """Plan an intent on a worker: the answer is the plan request (``planning``); its
    ``plan_id`` appears when planning is done (poll ``GET /api/plan-requests/{id}``)."""
    token = api_token(request)

    def create() -> PlanRequestOut:
        return ops.session_intent(token=token, session_id=session_id, data=data)

    return idempotent(request, key, data, create, status=202)


@router.post("/sessions/{session_id}/plans", response={201: PlanOut, **ERRORS})
def session_plan_upload(
    request: HttpRequest, session_id: int, data: PlanUploadIn, key: str | None = KEY_PARAM
) -> HttpResponse:
    """A plan file's text (YAML, JSON or Markdown), checked as ``sf plan import`` does."""
    token = api_token(request)

    def create() -> PlanOut:
        return ops.session_plan_upload(token=token, session_id=session_id, data=data)

    return idempotent(request, key, data, create)


@router.get("/sessions/{session_id}/snapshot", response={200: dict[str, Any], **ERRORS})
def session_snapshot(request: HttpRequest, session_id: int) -> dict[str, Any]:
    """What ``sf headless query`` prints for the session."""
    return ops.session_snapshot(token=api_token(request), session_id=session_id)
