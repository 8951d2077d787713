"""What a tool's answer says to a person (its text content); the structured content
carries the same in the API's schemas. Plus the two shapes the API answers as a bare
list or dict, which an MCP result carries as an object."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict

from api_app.schemas import (
    CommandOut,
    DecisionOut,
    DecisionPage,
    FollowUpOut,
    PlanOut,
    PlanRequestOut,
    ProjectOut,
    SessionOut,
    TaskDetailOut,
    TaskOut,
    TaskPage,
    UnitOut,
)


class ProjectList(BaseModel):
    items: list[ProjectOut]


class SessionStatus(BaseModel):
    """What ``sf headless query`` prints: a summary line, the session, its plans, its
    tasks with their board rows, the approvals waiting, the totals."""

    model_config = ConfigDict(extra="allow")
    summary: str
    session: dict[str, Any]
    tasks: list[dict[str, Any]]
    pending_approvals: list[dict[str, Any]]


def project_line(project: ProjectOut) -> str:
    role = project.role or "not a member"
    return (
        f"project {project.id} {project.name!r}: {project.repo_path} "
        f"(base {project.base_branch}; your role: {role})"
    )


def projects_text(found: ProjectList) -> str:
    if not found.items:
        return "No project is visible to this token."
    return "\n".join(project_line(project) for project in found.items)


def session_text(session: SessionOut) -> str:
    axes = ", ".join(f"{name} {value}" for name, value in session.axes.items())
    paused = f"; paused: {session.pause_reason or 'yes'}" if session.paused else ""
    return (
        f"session {session.id} on project {session.project_id} ({session.status}): "
        f"{session.title or '(untitled)'} — {axes}{paused}"
    )


def plan_request_text(request: PlanRequestOut) -> str:
    head = f"plan request {request.id} in session {request.session_id} is {request.status}"
    if request.plan_id is not None:
        return f"{head}: plan {request.plan_id} (show_plan to read it)"
    if request.status_reason:
        return f"{head}: {request.status_reason}"
    return f"{head} (poll show_plan_request until it is planned)"


def task_line(task: TaskOut) -> str:
    reason = f" — {task.status_reason}" if task.status_reason else ""
    return f"task {task.id} {task.key} [{task.status}] {task.title}{reason}"


def followup_text(sent: FollowUpOut) -> str:
    where = f"unit {sent.unit_id} of " if sent.unit_id else ""
    return (
        f"follow-up {sent.id} from {sent.author} to {where}task {sent.task_id} {sent.task_key} "
        f"[{sent.task_status}]: {sent.delivery}"
    )


def plan_text(plan: PlanOut) -> str:
    head = f"plan {plan.id} in session {plan.session_id} ({plan.status}): {plan.summary}"
    return "\n".join([head, *(f"  {task_line(task)}" for task in plan.tasks)])


def task_page_text(page: TaskPage) -> str:
    shown = f"{page.offset + 1} to {page.offset + len(page.items)}" if page.items else "none"
    head = f"{page.count} task(s), showing {shown}"
    return "\n".join([head, *(f"  {task_line(task)}" for task in page.items)])


def task_detail_text(task: TaskDetailOut) -> str:
    units = [
        f"  unit {unit.id} attempt {unit.attempt} [{unit.status}]"
        + (f": {unit.summary}" if unit.summary else "")
        for unit in task.units
    ]
    return "\n".join([task_line(task), *(units or ["  no unit has run yet"])])


def unit_text(unit: UnitOut) -> str:
    verified = {True: "verification passed", False: "verification failed", None: "not verified"}
    lines = [
        f"unit {unit.id} of task {unit.task_id}, attempt {unit.attempt} [{unit.status}], "
        f"model {unit.model or '-'}, cost {unit.cost}; {verified[unit.verification_passed]}"
    ]
    if unit.summary:
        lines.append(unit.summary)
    lines += [f"  {f.status} {f.path} +{f.added} -{f.removed}" for f in unit.files]
    if unit.trace:
        lines.append(f"{len(unit.trace)} trace event(s)")
    return "\n".join(lines)


def decision_text(decision: DecisionOut) -> str:
    call = json.dumps(decision.input, sort_keys=True, default=str)
    scope = f", scope {decision.review_scope}" if decision.review_scope else ""
    return (
        f"decision {decision.id} ({decision.review_status}{scope}) in session "
        f"{decision.session_id}: {decision.tool} {call} — {decision.risk_class}, "
        f"{decision.decision}: {decision.reason}"
    )


def decision_page_text(page: DecisionPage) -> str:
    head = f"{page.count} decision(s)"
    return "\n".join([head, *(f"  {decision_text(d)}" for d in page.items)])


def command_text(outcome: CommandOut) -> str:
    return outcome.message or session_text(outcome.session)


def status_text(status: SessionStatus) -> str:
    tasks = [
        f"  {task.get('key')} [{task.get('status')}] {task.get('title')}"
        + (f" — {task['reason']}" if task.get("reason") else "")
        for task in status.tasks
    ]
    waiting = [
        f"  approval {item.get('id')} waits: {item.get('tool')} — {item.get('reason')}"
        for item in status.pending_approvals
    ]
    return "\n".join([status.summary, *tasks, *waiting])
