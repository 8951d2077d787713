"""SF's MCP tools: each one calls one operation of ``api_app.operations`` (the function
the API's route calls), as the caller's token, with that token's role on the project.

The roles (``agents_app.access``): viewers read; operators open sessions, state intents,
upload plans, steer and retry or cancel tasks; approvers accept plans, review risk
decisions and tasks; admins register repositories. A project the token cannot see is
*not found*. ``docs/mcp.md`` lists the tools for people.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context
from mcp_types import CallToolResult, ToolAnnotations
from pydantic import Field

from api_app.models import ApiToken
from api_app.operations import projects, work
from api_app.problems import ApiProblem
from api_app.schemas import (
    MAX_LIMIT,
    AcceptIn,
    CommandOut,
    DecisionOut,
    DecisionPage,
    FollowUpIn,
    FollowUpOut,
    IntentIn,
    Page,
    PlanOut,
    PlanRequestOut,
    PlanUploadIn,
    ProjectIn,
    ProjectOut,
    ReviewIn,
    SessionIn,
    SessionOut,
    TaskDetailOut,
    TaskOut,
    TaskPage,
    TaskReviewIn,
    UnitOut,
)
from mcp_app import texts
from mcp_app.server import SfMcpServer, TokenOf, answer

READS = ToolAnnotations(read_only_hint=True, open_world_hint=False)
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
STOPS = ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=False)

ProjectId = Annotated[int, Field(description="a project's id (list_projects)")]
SessionId = Annotated[int, Field(description="a session's id")]
Limit = Annotated[int, Field(ge=1, le=MAX_LIMIT, description=f"at most {MAX_LIMIT}")]
Offset = Annotated[int, Field(ge=0)]


async def list_projects(ctx: Context) -> Annotated[CallToolResult, texts.ProjectList]:
    """The projects this token may see, each with your role on it. Any member."""
    return await answer(ctx, texts.projects_text, _projects)


def _projects(*, token: ApiToken) -> texts.ProjectList:
    return texts.ProjectList(items=projects.projects_list(token=token))


async def register_project(
    ctx: Context,
    name: str,
    repo_path: Annotated[str, Field(description="a git repository under SF_REPO_ROOTS")],
    base_branch: str = "main",
) -> Annotated[CallToolResult, ProjectOut]:
    """Register a git repository as a new project; you become its admin. Needs the
    admin role on some project."""
    data = ProjectIn(name=name, repo_path=repo_path, base_branch=base_branch)
    return await answer(ctx, texts.project_line, projects.project_register, data=data)


async def start_session(
    ctx: Context, project_id: ProjectId, title: str = ""
) -> Annotated[CallToolResult, SessionOut]:
    """Open a new session on a project (default axes). Needs the operator role."""
    data = SessionIn(project_id=project_id, title=title)
    return await answer(ctx, texts.session_text, projects.session_open, data=data)


async def state_intent(
    ctx: Context,
    intent: Annotated[str, Field(description="what you want done, in words")],
    project_id: Annotated[
        int | None, Field(description="plan in a new session on this project")
    ] = None,
    session_id: Annotated[int | None, Field(description="or plan in this session")] = None,
    replay: Annotated[
        str, Field(description="an offered recorded trace (*.jsonl) to answer instead of a model")
    ] = "",
) -> Annotated[CallToolResult, PlanRequestOut]:
    """State an intent: a worker plans it. Give project_id (a new session) or session_id.
    The answer is the plan request, *planning*; poll show_plan_request for its plan.
    Needs the operator role."""
    return await answer(
        ctx,
        texts.plan_request_text,
        _intent,
        data=IntentIn(intent=intent, replay=replay),
        project_id=project_id,
        session_id=session_id,
    )


def _intent(
    *, token: ApiToken, data: IntentIn, project_id: int | None, session_id: int | None
) -> PlanRequestOut:
    if session_id is not None and project_id is None:
        return projects.session_intent(token=token, session_id=session_id, data=data)
    if project_id is not None and session_id is None:
        return projects.project_intent(token=token, project_id=project_id, data=data)
    raise ApiProblem(422, "validation", "give project_id (a new session) or session_id, not both")


async def show_plan_request(
    ctx: Context, request_id: int
) -> Annotated[CallToolResult, PlanRequestOut]:
    """A plan request: planning, planned (with its plan_id) or failed (with the reason)."""
    return await answer(ctx, texts.plan_request_text, work.plan_request_show, request_id=request_id)


async def upload_plan(
    ctx: Context,
    session_id: SessionId,
    content: Annotated[str, Field(description="the plan file's text")],
    name: Annotated[str, Field(description="its name: .yaml, .json or .md")] = "plan.yaml",
) -> Annotated[CallToolResult, PlanOut]:
    """Upload a plan file, checked as `sf plan import` checks one. Needs the operator role."""
    data = PlanUploadIn(name=name, content=content)
    return await answer(
        ctx, texts.plan_text, projects.session_plan_upload, session_id=session_id, data=data
    )


async def show_plan(ctx: Context, plan_id: int) -> Annotated[CallToolResult, PlanOut]:
    """A plan: its summary, status and tasks."""
    return await answer(ctx, texts.plan_text, work.plan_show, plan_id=plan_id)


async def accept_plan(
    ctx: Context,
    plan_id: int,
    autonomous: Annotated[
        bool, Field(description="run its units now, wave after wave (Run autonomously)")
    ] = False,
    permission_profile: Annotated[
        Literal["restricted", "normal", "trusted", "unrestricted"] | None,
        Field(description="the session's profile while it runs (default: unchanged)"),
    ] = None,
    replay: Annotated[str, Field(description="an offered trace for the units")] = "",
    confirm_unrestricted: bool = False,
) -> Annotated[CallToolResult, PlanOut]:
    """Accept a proposed plan, or run it autonomously. Needs the approver role (and
    admin to run at unrestricted, which also needs confirm_unrestricted)."""
    data = AcceptIn(
        autonomous=autonomous,
        permission_profile=permission_profile,
        replay=replay,
        confirm_unrestricted=confirm_unrestricted,
    )
    return await answer(ctx, texts.plan_text, work.plan_accept, plan_id=plan_id, data=data)


async def list_tasks(
    ctx: Context,
    session_id: SessionId,
    status: Annotated[str, Field(description="only tasks in this status, e.g. review")] = "",
    limit: Limit = 50,
    offset: Offset = 0,
) -> Annotated[CallToolResult, TaskPage]:
    """A session's tasks in plan order, a page at a time."""
    page = Page(limit=limit, offset=offset)
    return await answer(
        ctx,
        texts.task_page_text,
        work.session_tasks,
        session_id=session_id,
        page=page,
        status=status,
    )


async def show_task(ctx: Context, task_id: int) -> Annotated[CallToolResult, TaskDetailOut]:
    """A task with its units (attempts); a unit's id opens its trace and diff."""
    return await answer(ctx, texts.task_detail_text, work.task_show, task_id=task_id)


async def show_unit(
    ctx: Context,
    unit_id: int,
    include_trace: Annotated[
        bool, Field(description="every trace event too (long); the diff is always there")
    ] = False,
) -> Annotated[CallToolResult, UnitOut]:
    """A unit: status, verification, summary, the files it changed and its patch."""
    return await answer(ctx, texts.unit_text, _unit, unit_id=unit_id, include_trace=include_trace)


def _unit(*, token: ApiToken, unit_id: int, include_trace: bool) -> UnitOut:
    unit = work.unit_show(token=token, unit_id=unit_id)
    return unit if include_trace else unit.model_copy(update={"trace": []})


async def list_decisions(
    ctx: Context,
    status: Annotated[
        Literal["pending", "approved", "rejected", ""], Field(description="'' for all")
    ] = "pending",
    limit: Limit = 50,
    offset: Offset = 0,
) -> Annotated[CallToolResult, DecisionPage]:
    """Risk decisions of your projects, newest first: by default those waiting for a
    person (a unit is blocked until one is approved)."""
    page = Page(limit=limit, offset=offset)
    return await answer(
        ctx, texts.decision_page_text, work.decisions_list, page=page, status=status
    )


async def review_decision(
    ctx: Context,
    decision_id: int,
    action: Literal["approve", "reject"],
    scope: Annotated[
        Literal["once", "session", "project"],
        Field(description="what a later identical call may do without asking"),
    ] = "once",
    note: str = "",
    match: Annotated[
        Literal["exact", "family"], Field(description="family: the command's whole family")
    ] = "exact",
) -> Annotated[CallToolResult, DecisionOut]:
    """Approve or reject a pending risk decision. Needs the approver role."""
    data = ReviewIn(action=action, scope=scope, note=note, match=match)
    return await answer(
        ctx, texts.decision_text, work.decision_review, decision_id=decision_id, data=data
    )


async def review_task(
    ctx: Context,
    task_id: int,
    action: Literal["approve", "request_changes"],
    reason: Annotated[str, Field(description="what should change (request_changes)")] = "",
) -> Annotated[CallToolResult, TaskOut]:
    """Review a task waiting in review: approve (it merges once the merged tree passes
    its checks) or request changes. Needs the approver role."""
    data = TaskReviewIn(action=action, reason=reason)
    return await answer(ctx, texts.task_line, work.task_review, task_id=task_id, data=data)


async def recover_task(
    ctx: Context, task_id: int, action: Literal["retry", "cancel", "skip"]
) -> Annotated[CallToolResult, TaskOut]:
    """Retry or cancel a task (operator), or skip it (approver), as the board's buttons do."""
    return await answer(ctx, texts.task_line, work.task_recover, task_id=task_id, action=action)


async def send_followup(
    ctx: Context,
    text: Annotated[str, Field(description="the message for the task's agent")],
    task_id: Annotated[int | None, Field(description="the task (or give unit_id)")] = None,
    unit_id: Annotated[int | None, Field(description="a running unit of the task")] = None,
    project_id: Annotated[
        int | None, Field(description="the project you mean: another one's task is refused")
    ] = None,
) -> Annotated[CallToolResult, FollowUpOut]:
    """Send a message to a task's agent. A running unit reads it before its next step;
    a failed task is retried, a paused one resumed, one in review sent back, the
    message in the next attempt's brief. Needs the operator role (in review: approver)."""
    return await answer(
        ctx,
        texts.followup_text,
        _followup,
        data=FollowUpIn(text=text, project_id=project_id),
        task_id=task_id,
        unit_id=unit_id,
    )


def _followup(
    *, token: ApiToken, data: FollowUpIn, task_id: int | None, unit_id: int | None
) -> FollowUpOut:
    if (task_id is None) == (unit_id is None):
        raise ApiProblem(422, "validation", "give task_id or unit_id (a running unit), not both")
    return work.followup_send(token=token, data=data, task_id=task_id, unit_id=unit_id)


async def session_status(
    ctx: Context, session_id: SessionId
) -> Annotated[CallToolResult, texts.SessionStatus]:
    """A session at a glance (what `sf headless query` prints): badge, tasks, waiting
    approvals, totals."""
    return await answer(ctx, texts.status_text, _status, session_id=session_id)


def _status(*, token: ApiToken, session_id: int) -> texts.SessionStatus:
    snapshot = projects.session_snapshot(token=token, session_id=session_id)
    return texts.SessionStatus.model_validate(snapshot)


async def run_command(
    ctx: Context,
    session_id: SessionId,
    text: Annotated[str, Field(description="e.g. '/pause', '/mode build --autonomous'")],
) -> Annotated[CallToolResult, CommandOut]:
    """One command of the session's command bar (/pause, /stop, /steer, /mode, /status
    …). The role it needs follows from the command: steering is the operator's."""
    return await answer(
        ctx, texts.command_text, projects.session_command, session_id=session_id, text=text
    )


TOOLS: list[tuple[Any, ToolAnnotations]] = [
    (list_projects, READS),
    (register_project, WRITES),
    (start_session, WRITES),
    (state_intent, WRITES),
    (show_plan_request, READS),
    (upload_plan, WRITES),
    (show_plan, READS),
    (accept_plan, WRITES),
    (list_tasks, READS),
    (show_task, READS),
    (show_unit, READS),
    (list_decisions, READS),
    (review_decision, WRITES),
    (review_task, WRITES),
    (recover_task, STOPS),
    (send_followup, WRITES),
    (session_status, READS),
    (run_command, STOPS),
]


def mcp_server(*, token_of: TokenOf) -> SfMcpServer:
    """SF's MCP server with every tool; ``token_of`` finds the caller's token."""
    server = SfMcpServer(token_of=token_of)
    for tool, hints in TOOLS:
        server.add_tool(tool, annotations=hints, structured_output=True)
    return server
