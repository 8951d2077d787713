"""Plans, tasks, units, risk decisions and metrics: each calls the service the web calls."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from ninja import Query, Router

from agents_app.access import RECOVERY_ACTIONS, Action, profile_action, require
from agents_app.gate.approvals import decision_review
from agents_app.models import AgentSession, ReviewStatus, RiskDecision, TraceEvent
from api_app.auth import api_user, visible_or_404, visible_projects
from api_app.problems import ApiProblem, Problem
from api_app.schemas import (
    AcceptIn,
    DecisionOut,
    DecisionPage,
    FileDiffOut,
    Page,
    PlanOut,
    PlanRequestOut,
    ReviewIn,
    TaskOut,
    TaskPage,
    TaskReviewIn,
    TraceEventOut,
    UnitOut,
    decision_out,
    plan_out,
    plan_request_out,
    task_out,
    unit_out,
)
from dashboard_app.metrics_report import metrics_report, window_parse
from sf_core.actors import Actor
from tasks_app.diffs import diff_files
from tasks_app.engine.recovery import RECOVERY
from tasks_app.engine.review import task_approve, task_request_changes
from tasks_app.intake import plan_start
from tasks_app.models import Plan, PlanRequest, Task, Unit

router = Router(tags=["plans, tasks and reviews"])
ERRORS: dict[int, type] = {400: Problem, 403: Problem, 404: Problem, 409: Problem, 422: Problem}


@router.get("/plan-requests/{request_id}", response={200: PlanRequestOut, **ERRORS})
def plan_request_show(request: HttpRequest, request_id: int) -> PlanRequestOut:
    found = visible_or_404(request, PlanRequest.objects.all(), request_id, "session__project")
    return plan_request_out(found)


def _plan(request: HttpRequest, plan_id: int) -> Plan:
    queryset = Plan.objects.select_related("session__project")
    return visible_or_404(request, queryset, plan_id, "session__project")


@router.get("/plans/{plan_id}", response={200: PlanOut, **ERRORS})
def plan_show(request: HttpRequest, plan_id: int) -> PlanOut:
    return plan_out(_plan(request, plan_id))


@router.post("/plans/{plan_id}/accept", response={200: PlanOut, **ERRORS})
def plan_accept(request: HttpRequest, plan_id: int, data: AcceptIn) -> PlanOut:
    """**Accept** (``autonomous: false``) or **Run autonomously**, at a profile."""
    plan = _plan(request, plan_id)
    user, project = api_user(request), plan.session.project
    require(user, project, Action.ACCEPT_PLAN)
    if data.autonomous:  # running it is running the session at that profile
        require(
            user,
            project,
            profile_action(data.permission_profile or plan.session.permission_profile),
        )
    plan_start(
        plan=plan,
        actor=Actor.of(user),
        autonomous=data.autonomous,
        permission_profile=data.permission_profile,
        replay=data.replay,
        confirmed=data.confirm_unrestricted,
    )
    plan.refresh_from_db()
    return plan_out(plan)


@router.get("/sessions/{session_id}/tasks", response={200: TaskPage, **ERRORS})
def session_tasks(
    request: HttpRequest, session_id: int, page: Query[Page], status: str = ""
) -> TaskPage:
    """The session's tasks in plan order, a page at a time (``limit`` ≤ 100)."""
    session = visible_or_404(request, AgentSession.objects.all(), session_id, "project")
    tasks = Task.objects.filter(plan__session=session).order_by("plan__created_at", "position")
    if status:
        tasks = tasks.filter(status=status)
    items = tasks[page.offset : page.offset + page.limit]
    return TaskPage(
        count=tasks.count(),
        limit=page.limit,
        offset=page.offset,
        items=[task_out(task) for task in items],
    )


@router.post("/tasks/{task_id}/review", response={200: TaskOut, **ERRORS})
def task_review(request: HttpRequest, task_id: int, data: TaskReviewIn) -> TaskOut:
    """Approve a task in review (it enters the merge queue and merges once the merged
    tree verifies), or request changes with the reviewer's words."""
    queryset = Task.objects.select_related("plan__session__project")
    task = visible_or_404(request, queryset, task_id, "plan__session__project")
    user = api_user(request)
    require(user, task.plan.session.project, Action.REVIEW_TASK)
    actor = Actor.of(user)
    if data.action == "approve":
        task = task_approve(task=task, actor=actor)
    else:
        task = task_request_changes(task=task, actor=actor, reason=data.reason)
    task.refresh_from_db()
    return task_out(task)


@router.post("/tasks/{task_id}/{action}", response={200: TaskOut, **ERRORS})
def task_recover(request: HttpRequest, task_id: int, action: str) -> TaskOut:
    """``retry``, ``cancel`` or ``skip`` a task, as the board's buttons do."""
    service = RECOVERY.get(action)
    if service is None:
        raise ApiProblem(404, "not-found", f"no task action {action!r}; retry, cancel, skip")
    queryset = Task.objects.select_related("plan__session__project")
    task = visible_or_404(request, queryset, task_id, "plan__session__project")
    user = api_user(request)
    require(user, task.plan.session.project, RECOVERY_ACTIONS[action])
    return task_out(service(task=task, actor=Actor.of(user)))


@router.get("/units/{unit_id}", response={200: UnitOut, **ERRORS})
def unit_show(request: HttpRequest, unit_id: int) -> UnitOut:
    """A unit with its trace (every event) and its checkpoint diff (files and patch)."""
    queryset = Unit.objects.select_related("task__plan__session__project")
    unit = visible_or_404(request, queryset, unit_id, "task__plan__session__project")
    events = TraceEvent.objects.filter(unit=unit).order_by("seq")
    trace = [TraceEventOut(seq=e.seq, kind=e.kind, name=e.name, payload=e.payload) for e in events]
    files = [
        FileDiffOut(path=f.path, status=f.status, added=f.added, removed=f.removed)
        for f in diff_files(unit.checkpoint_patch)
    ]
    return unit_out(unit, trace, files)


@router.get("/decisions", response={200: DecisionPage, **ERRORS})
def decisions_list(
    request: HttpRequest, page: Query[Page], status: str = "pending"
) -> DecisionPage:
    """Risk decisions of the visible projects, newest first (``status``: pending,
    approved, rejected, or empty for all)."""
    found = RiskDecision.objects.filter(session__project__in=visible_projects(request))
    if status:
        found = found.filter(review_status=status)
    found = found.select_related("session").order_by("-created_at", "-pk")
    items = found[page.offset : page.offset + page.limit]
    return DecisionPage(
        count=found.count(),
        limit=page.limit,
        offset=page.offset,
        items=[decision_out(d) for d in items],
    )


@router.post("/decisions/{decision_id}/review", response={200: DecisionOut, **ERRORS})
def decision_review_call(request: HttpRequest, decision_id: int, data: ReviewIn) -> DecisionOut:
    queryset = RiskDecision.objects.select_related("session__project")
    decision = visible_or_404(request, queryset, decision_id, "session__project")
    if decision.review_status != ReviewStatus.PENDING:
        raise ApiProblem(409, "conflict", f"decision {decision.pk} is {decision.review_status}")
    reviewed = decision_review(
        decision=decision,
        reviewer=api_user(request),
        approve=data.action == "approve",
        scope=data.scope,
        note=data.note,
        match=data.match,
    )
    return decision_out(reviewed)


@router.get("/metrics", response={200: dict[str, Any], **ERRORS})
def metrics(
    request: HttpRequest, since: str | None = None, until: str | None = None, by: str = "day"
) -> dict[str, Any]:
    """The outcome metrics of the visible projects (``sf metrics --format json``)."""
    report = metrics_report(visible_projects(request), window_parse(since, until, by))
    return report.as_json()
