"""Plans, tasks, units, risk decisions and metrics for a token: each calls the service
the web calls, after the same visibility and role checks."""

from __future__ import annotations

from typing import Any

from agents_app.access import RECOVERY_ACTIONS, Action, profile_action, require
from agents_app.gate import approvals
from agents_app.models import AgentSession, ReviewStatus, RiskDecision, TraceEvent
from api_app.auth import visible_or_404
from api_app.models import ApiToken
from api_app.problems import ApiProblem
from api_app.schemas import (
    AcceptIn,
    DecisionOut,
    DecisionPage,
    FileDiffOut,
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
    TraceEventOut,
    UnitOut,
    decision_out,
    followup_out,
    plan_out,
    plan_request_out,
    task_detail_out,
    task_out,
    unit_out,
)
from api_app.tokens import token_projects
from dashboard_app.metrics_report import metrics_report, window_parse
from sf_core.actors import Actor
from tasks_app.diffs import diff_files
from tasks_app.engine.recovery import RECOVERY
from tasks_app.engine.review import task_approve, task_request_changes
from tasks_app.features.followups import services as followups
from tasks_app.intake import plan_start
from tasks_app.models import Plan, PlanRequest, Task, Unit


def plan_request_show(*, token: ApiToken, request_id: int) -> PlanRequestOut:
    found = visible_or_404(token, PlanRequest.objects.all(), request_id, "session__project")
    return plan_request_out(found)


def _plan(token: ApiToken, plan_id: int) -> Plan:
    queryset = Plan.objects.select_related("session__project")
    return visible_or_404(token, queryset, plan_id, "session__project")


def plan_show(*, token: ApiToken, plan_id: int) -> PlanOut:
    return plan_out(_plan(token, plan_id))


def plan_accept(*, token: ApiToken, plan_id: int, data: AcceptIn) -> PlanOut:
    """**Accept** (``autonomous: false``) or **Run autonomously**, at a profile."""
    plan = _plan(token, plan_id)
    user, project = token.user, plan.session.project
    require(user, project, Action.ACCEPT_PLAN)
    if data.autonomous:  # running it is running the session at that profile
        profile = data.permission_profile or plan.session.permission_profile
        require(user, project, profile_action(profile))
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


def session_tasks(
    *, token: ApiToken, session_id: int, page: Page, status: str | None = None
) -> TaskPage:
    """The session's tasks in plan order, a page at a time."""
    session = visible_or_404(token, AgentSession.objects.all(), session_id, "project")
    tasks = Task.objects.filter(plan__session=session).order_by("plan__created_at", "position")
    if status:
        tasks = tasks.filter(status=status)
    # Only the columns TaskOut shows (a task's description, criteria and verify
    # commands are most of its row and nothing of the list's), as rows, not models.
    return TaskPage(**page.of(tasks.values(*TaskOut.model_fields), lambda row: TaskOut(**row)))


def _task(token: ApiToken, task_id: int) -> Task:
    queryset = Task.objects.select_related("plan__session__project")
    return visible_or_404(token, queryset, task_id, "plan__session__project")


def task_show(*, token: ApiToken, task_id: int) -> TaskDetailOut:
    """A task with its units (attempts), oldest first."""
    task = _task(token, task_id)
    return task_detail_out(task, list(Unit.objects.filter(task=task).order_by("attempt")))


def task_review(*, token: ApiToken, task_id: int, data: TaskReviewIn) -> TaskOut:
    """Approve a task in review (it enters the merge queue and merges once the merged
    tree verifies), or request changes with the reviewer's words."""
    task = _task(token, task_id)
    user = token.user
    require(user, task.plan.session.project, Action.REVIEW_TASK)
    actor = Actor.of(user)
    if data.action == "approve":
        task = task_approve(task=task, actor=actor)
    else:
        task = task_request_changes(task=task, actor=actor, reason=data.reason)
    task.refresh_from_db()
    return task_out(task)


def task_recover(*, token: ApiToken, task_id: int, action: str, reason: str = "") -> TaskOut:
    """``retry``, ``resume``, ``stop``, ``cancel`` or ``skip`` a task, as the board's
    buttons do (``tasks_app.engine.recovery``)."""
    service = RECOVERY.get(action)
    if service is None:
        known = ", ".join(RECOVERY)
        raise ApiProblem(404, "not-found", f"no task action {action!r}; {known}")
    task = _task(token, task_id)
    require(token.user, task.plan.session.project, RECOVERY_ACTIONS[action])
    task = service(task=task, actor=Actor.of(token.user), reason=reason[:500])
    task.refresh_from_db()
    return task_out(task)


def followup_send(
    *, token: ApiToken, data: FollowUpIn, task_id: int | None = None, unit_id: int | None = None
) -> FollowUpOut:
    """A follow-up to a task's agent, or to a running unit (``features.followups``); the
    service checks the role (steering's; sending a task in review back, the reviewer's)."""
    unit = None
    if unit_id is not None:
        queryset = Unit.objects.select_related("task__plan__session__project")
        unit = visible_or_404(token, queryset, unit_id, "task__plan__session__project")
        task = unit.task
    else:
        task = _task(token, task_id or 0)
    sent = followups.followup_send(
        text=data.text, actor=Actor.of(token.user), task=task, unit=unit, project_id=data.project_id
    )
    return followup_out(sent.followup, sent.task, sent.delivery)


def unit_show(*, token: ApiToken, unit_id: int) -> UnitOut:
    """A unit with its trace (every event) and its checkpoint diff (files and patch)."""
    queryset = Unit.objects.select_related("task__plan__session__project")
    unit = visible_or_404(token, queryset, unit_id, "task__plan__session__project")
    events = TraceEvent.objects.filter(unit=unit).order_by("seq")
    trace = [TraceEventOut(seq=e.seq, kind=e.kind, name=e.name, payload=e.payload) for e in events]
    files = [
        FileDiffOut(path=f.path, status=f.status, added=f.added, removed=f.removed)
        for f in diff_files(unit.checkpoint_patch)
    ]
    return unit_out(unit, trace, files)


def decisions_list(*, token: ApiToken, page: Page, status: str = "pending") -> DecisionPage:
    """Risk decisions of the visible projects, newest first (``status``: pending,
    approved, rejected, not_needed, or all; empty is all too)."""
    found = RiskDecision.objects.filter(session__project__in=token_projects(token))
    if status and status != "all":
        found = found.filter(review_status=status)
    found = found.select_related("session").order_by("-created_at", "-pk")
    return DecisionPage(**page.of(found, decision_out))


def decision_review(*, token: ApiToken, decision_id: int, data: ReviewIn) -> DecisionOut:
    """Approve or reject a pending risk decision, once, for a session or the project
    (the gate's review service checks the approver role)."""
    queryset = RiskDecision.objects.select_related("session__project")
    decision = visible_or_404(token, queryset, decision_id, "session__project")
    if decision.review_status != ReviewStatus.PENDING:
        raise ApiProblem(409, "conflict", f"decision {decision.pk} is {decision.review_status}")
    reviewed = approvals.decision_review(
        decision=decision,
        reviewer=token.user,
        approve=data.action == "approve",
        scope=data.scope,
        note=data.note,
        match=data.match,
    )
    return decision_out(reviewed)


def metrics_show(
    *, token: ApiToken, since: str | None = None, until: str | None = None, by: str = "day"
) -> dict[str, Any]:
    """The outcome metrics of the visible projects (``sf metrics --format json``)."""
    report = metrics_report(token_projects(token), window_parse(since, until, by))
    return report.as_json()
