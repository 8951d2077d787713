"""Lists and details beside the core calls: sessions, a session's plans, one decision, a
unit's trace (a page at a time) and its diff; and ``/steer`` as a typed call. Each reads
through the same visibility rule (404 for strangers)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from ninja import Query, Router

from agents_app.models import AgentSession, RiskDecision, SessionStatus, TraceEvent, TraceKind
from api_app.auth import api_token, visible_or_404
from api_app.detail_schemas import (
    DiffOut,
    PlanPage,
    SessionPage,
    SteerIn,
    TracePage,
    diff_out,
    trace_item_out,
)
from api_app.idempotency import KEY_PARAM, idempotent
from api_app.operations import projects as project_ops
from api_app.problems import ERRORS
from api_app.routes.sessions import router as sessions_router
from api_app.schemas import CommandOut, DecisionOut, Page, decision_out, plan_out, session_out
from api_app.tokens import token_projects
from tasks_app.diffs import diff_files
from tasks_app.models import Plan, Unit

router = Router(tags=["lists and details"])


# ninja serves a path from the one router that declares it: GET /sessions and GET
# /sessions/{id}/plans join the POSTs of the same paths on the sessions router.
@sessions_router.get("/sessions", response={200: SessionPage, **ERRORS})
def sessions_list(
    request: HttpRequest,
    page: Query[Page],
    project_id: int | None = None,
    status: SessionStatus | None = None,
) -> SessionPage:
    """The sessions of the visible projects, newest first."""
    found = AgentSession.objects.filter(project__in=token_projects(api_token(request)))
    if project_id is not None:
        found = found.filter(project_id=project_id)
    if status is not None:
        found = found.filter(status=status)
    found = found.order_by("-created_at", "-pk")
    return SessionPage(**page.of(found, session_out))


@sessions_router.get("/sessions/{session_id}/plans", response={200: PlanPage, **ERRORS})
def session_plans(request: HttpRequest, session_id: int, page: Query[Page]) -> PlanPage:
    """The session's plans, oldest first, each with its tasks."""
    sessions = AgentSession.objects.all()
    session = visible_or_404(api_token(request), sessions, session_id, "project")
    plans = Plan.objects.filter(session=session).order_by("created_at", "pk")
    return PlanPage(**page.of(plans, plan_out))


@router.post("/sessions/{session_id}/steer", response={200: CommandOut, **ERRORS})
def session_steer(
    request: HttpRequest, session_id: int, data: SteerIn, key: str | None = KEY_PARAM
) -> HttpResponse:
    """``/steer`` with typed fields: change one axis when its scope is due (``now``,
    ``after-current-tool``, ``after-current-unit``, ``next-milestone``)."""
    token = api_token(request)

    def create() -> CommandOut:
        return project_ops.session_command(token=token, session_id=session_id, text=data.command())

    return idempotent(request, key, data, create, status=200)


def _unit(request: HttpRequest, unit_id: int) -> Unit:
    path = "task__plan__session__project"
    return visible_or_404(api_token(request), Unit.objects.all(), unit_id, path)


@router.get("/units/{unit_id}/trace", response={200: TracePage, **ERRORS})
def unit_trace(
    request: HttpRequest, unit_id: int, page: Query[Page], kind: TraceKind | None = None
) -> TracePage:
    """The unit's trace in order (model steps, tool calls, …), a page at a time."""
    events = TraceEvent.objects.filter(unit=_unit(request, unit_id)).order_by("seq")
    if kind is not None:
        events = events.filter(kind=kind)
    return TracePage(**page.of(events, trace_item_out))


@router.get("/units/{unit_id}/diff", response={200: DiffOut, **ERRORS})
def unit_diff(request: HttpRequest, unit_id: int) -> DiffOut:
    """The unit's checkpoint: its files with lines added and removed, and the patch."""
    unit = _unit(request, unit_id)
    return diff_out(unit, diff_files(unit.checkpoint_patch))


@router.get("/decisions/{decision_id}", response={200: DecisionOut, **ERRORS})
def decision_show(request: HttpRequest, decision_id: int) -> DecisionOut:
    queryset = RiskDecision.objects.select_related("session")
    return decision_out(
        visible_or_404(api_token(request), queryset, decision_id, "session__project")
    )
