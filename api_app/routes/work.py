"""Plans, tasks, units, risk decisions and metrics: each route calls one operation
(``api_app.operations``), the function the MCP server's tool calls too."""

from __future__ import annotations

from datetime import date
from typing import Any, Literal

from django.http import HttpRequest
from ninja import Query, Router

from agents_app.models import ReviewStatus
from api_app.auth import api_token
from api_app.operations import work as ops
from api_app.problems import ERRORS
from api_app.schemas import (
    AcceptIn,
    DecisionOut,
    DecisionPage,
    FollowUpIn,
    FollowUpOut,
    Page,
    PlanOut,
    PlanRequestOut,
    ReviewIn,
    TaskDetailOut,
    TaskOut,
    TaskPage,
    TaskReviewIn,
    UnitOut,
)
from tasks_app.models import TaskStatus

router = Router(tags=["plans, tasks and reviews"])


@router.get("/plan-requests/{request_id}", response={200: PlanRequestOut, **ERRORS})
def plan_request_show(request: HttpRequest, request_id: int) -> PlanRequestOut:
    return ops.plan_request_show(token=api_token(request), request_id=request_id)


@router.get("/plans/{plan_id}", response={200: PlanOut, **ERRORS})
def plan_show(request: HttpRequest, plan_id: int) -> PlanOut:
    return ops.plan_show(token=api_token(request), plan_id=plan_id)


@router.post("/plans/{plan_id}/accept", response={200: PlanOut, **ERRORS})
def plan_accept(request: HttpRequest, plan_id: int, data: AcceptIn) -> PlanOut:
    """**Accept** (``autonomous: false``) or **Run autonomously**, at a profile."""
    return ops.plan_accept(token=api_token(request), plan_id=plan_id, data=data)


@router.get("/sessions/{session_id}/tasks", response={200: TaskPage, **ERRORS})
def session_tasks(
    request: HttpRequest, session_id: int, page: Query[Page], status: TaskStatus | None = None
) -> TaskPage:
    """The session's tasks in plan order, a page at a time (``limit`` ≤ 100)."""
    return ops.session_tasks(
        token=api_token(request), session_id=session_id, page=page, status=status
    )


@router.get("/tasks/{task_id}", response={200: TaskDetailOut, **ERRORS})
def task_show(request: HttpRequest, task_id: int) -> TaskDetailOut:
    """A task with its units (attempts), oldest first: a unit's id opens its trace and diff."""
    return ops.task_show(token=api_token(request), task_id=task_id)


@router.post("/tasks/{task_id}/review", response={200: TaskOut, **ERRORS})
def task_review(request: HttpRequest, task_id: int, data: TaskReviewIn) -> TaskOut:
    """Approve a task in review (it enters the merge queue and merges once the merged
    tree verifies), or request changes with the reviewer's words."""
    return ops.task_review(token=api_token(request), task_id=task_id, data=data)


@router.post("/tasks/{task_id}/followups", response={200: FollowUpOut, **ERRORS})
def task_followup(request: HttpRequest, task_id: int, data: FollowUpIn) -> FollowUpOut:
    """A person's message to the task's agent: a running unit reads it before its next
    step; a failed task is retried, a paused one resumed and one in review sent back,
    the message in the next attempt's brief. Operator (in review: approver)."""
    return ops.followup_send(token=api_token(request), task_id=task_id, data=data)


@router.post("/units/{unit_id}/followups", response={200: FollowUpOut, **ERRORS})
def unit_followup(request: HttpRequest, unit_id: int, data: FollowUpIn) -> FollowUpOut:
    """A message to a running unit, read by its model before its next step; a unit that
    has ended is refused (409): send it to the task instead. Operator."""
    return ops.followup_send(token=api_token(request), unit_id=unit_id, data=data)


@router.post("/tasks/{task_id}/{action}", response={200: TaskOut, **ERRORS})
def task_recover(
    request: HttpRequest,
    task_id: int,
    action: Literal["retry", "resume", "stop", "cancel", "skip"],
    reason: str = "",
) -> TaskOut:
    """``retry`` a failed task, ``resume`` a paused one, ``cancel`` or ``skip`` a task, as
    the board's buttons do. ``cancel`` of a running task cuts its unit's model answer
    (the unit ends cancelled, its worktree kept); ``stop`` ends a running unit after its
    current step (the task is paused, to be resumed). ``reason`` is recorded with it."""
    return ops.task_recover(token=api_token(request), task_id=task_id, action=action, reason=reason)


@router.get("/units/{unit_id}", response={200: UnitOut, **ERRORS})
def unit_show(request: HttpRequest, unit_id: int) -> UnitOut:
    """A unit with its trace (every event) and its checkpoint diff (files and patch)."""
    return ops.unit_show(token=api_token(request), unit_id=unit_id)


@router.get("/decisions", response={200: DecisionPage, **ERRORS})
def decisions_list(
    request: HttpRequest,
    page: Query[Page],
    status: ReviewStatus | Literal["all"] = ReviewStatus.PENDING,
) -> DecisionPage:
    """Risk decisions of the visible projects, newest first (``status``: pending,
    approved, rejected, not_needed, or all)."""
    return ops.decisions_list(token=api_token(request), page=page, status=status)


@router.post("/decisions/{decision_id}/review", response={200: DecisionOut, **ERRORS})
def decision_review_call(request: HttpRequest, decision_id: int, data: ReviewIn) -> DecisionOut:
    return ops.decision_review(token=api_token(request), decision_id=decision_id, data=data)


@router.get("/metrics", response={200: dict[str, Any], **ERRORS})
def metrics(
    request: HttpRequest,
    since: date | None = None,
    until: date | None = None,
    by: Literal["day", "week"] = "day",
) -> dict[str, Any]:
    """The outcome metrics of the visible projects (``sf metrics --format json``);
    ``since`` and ``until`` are dates (the last four weeks by default)."""
    return ops.metrics_show(
        token=api_token(request),
        since=since.isoformat() if since else None,
        until=until.isoformat() if until else None,
        by=by,
    )
