"""What SF tells an issue it took, as the session's plan moves on: the plan (once it is
proposed; accepted at once when the policy says autonomous), each pull request offered
for review, and the outcome each time the plan ends (merged, or why not). Called with
the issue's row held (``poll._locked``); each post is recorded after the forge
answered it, so a sweep that comes again posts nothing twice."""

from __future__ import annotations

import logging

from django.db import transaction

from sf_core.actors import Actor
from sf_core.errors import SfError
from tasks_app.features.issues import texts
from tasks_app.features.issues.api import IssuesApi
from tasks_app.intake import plan_start
from tasks_app.models import (
    FINISHED_PLAN_STATUSES,
    ForgeIssue,
    ForgePullRequest,
    IssueState,
    MergeRequest,
    MergeStatus,
    Plan,
    PlanRequestStatus,
    PlanStatus,
)

logger = logging.getLogger("sf.forge.issues")
ENDED = (*FINISHED_PLAN_STATUSES, PlanStatus.REJECTED)


def current_plan(row: ForgeIssue) -> Plan | None:
    """The session's plan: the latest one not superseded by an edit."""
    plans = Plan.objects.filter(session=row.session).exclude(status=PlanStatus.SUPERSEDED)
    return plans.order_by("-created_at", "-pk").first()


def follow_plan(row: ForgeIssue, api: IssuesApi) -> int:
    """Post what changed since the last sweep; how many comments were posted."""
    plan = current_plan(row)
    if plan is None:
        return _planning_failed(row, api)
    if row.plan_posted_id != plan.pk:
        return _plan_posted(row, api, plan)
    posted = _pulls_offered(row, api, plan)
    if plan.status == PlanStatus.ACCEPTED and row.state != IssueState.RUNNING:
        # Accepted by a person, or a failed task retried (by a comment, say).
        _update(row, state=IssueState.RUNNING, reason=f"plan {plan.pk} accepted")
    if plan.status in ENDED:
        posted += _ended(row, api, plan)
    return posted


def _post(row: ForgeIssue, api: IssuesApi, body: str) -> None:
    """A comment on the issue; its id is recorded as read (SF's own, not a follow-up)."""
    made = api.comment(row.number, body)
    _update(row, seen_comments=[*row.seen_comments, made])


def _update(row: ForgeIssue, **fields: object) -> None:
    ForgeIssue.objects.filter(pk=row.pk).update(**fields)
    for name, value in fields.items():
        setattr(row, name, value)


def _planning_failed(row: ForgeIssue, api: IssuesApi) -> int:
    request = row.plan_request
    if request is None or request.status == PlanRequestStatus.PLANNING:
        return 0
    if row.state == IssueState.FAILED:
        return 0
    reason = f"planning failed: {request.status_reason or 'no plan came back'}"
    _post(row, api, texts.failed_comment(reason))
    _update(row, state=IssueState.FAILED, reason=reason)
    return 1


def _plan_posted(row: ForgeIssue, api: IssuesApi, plan: Plan) -> int:
    """The plan on the issue (started first when the policy says autonomous), or why
    the planner's answer was refused."""
    if plan.status == PlanStatus.REJECTED:  # before SF told the issue of it
        refused = "rejected in SF" if plan.rejected_by_id else "refused by SF's plan checks"
        reason = f"the planned tasks were {refused}: {plan.status_reason[:500]}"
        _post(row, api, texts.failed_comment(reason))
        _update(row, state=IssueState.FAILED, reason=reason, plan_posted=plan)
        return 1
    policy = row.project.parsed_policy.forge
    issues = policy.issues if policy is not None else None
    profile = issues.permission_profile if issues is not None else "restricted"
    note = ""
    if plan.status == PlanStatus.PROPOSED and issues is not None and issues.autonomous:
        note = _start(row, plan, profile)
        plan.refresh_from_db()
    running = plan.status != PlanStatus.PROPOSED  # accepted (or already ended) by now
    if running:
        profile = plan.accepted_permission_profile or profile
    body = texts.plan_comment(plan=plan, profile=profile, running=running, note=note)
    _post(row, api, body)
    state = IssueState.RUNNING if running else IssueState.PROPOSED
    _update(row, state=state, reason=f"plan {plan.pk} {plan.status}", plan_posted=plan)
    return 1


def _start(row: ForgeIssue, plan: Plan, profile: str) -> str:
    """**Run autonomously** at the policy's profile; '' when it started, else why not."""
    try:
        with transaction.atomic():
            plan_start(
                plan=plan,
                actor=Actor.system(f"{row.kind}-issues"),
                autonomous=True,
                permission_profile=profile,
            )
    except SfError as exc:
        logger.warning("plan %s of %s not started: %s", plan.pk, row, exc)
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
        return f"SF could not start it autonomously ({first}), so a person must accept it."
    return ""


def _pulls_offered(row: ForgeIssue, api: IssuesApi, plan: Plan) -> int:
    pulls = ForgePullRequest.objects.filter(task__plan=plan).exclude(url="").select_related("task")
    posted = 0
    for pull in pulls.order_by("created_at", "pk"):
        if pull.url in row.announced_pulls:
            continue
        _post(row, api, texts.offered_comment(task=pull.task, url=pull.url))
        _update(row, announced_pulls=[*row.announced_pulls, pull.url])
        posted += 1
    return posted


def _ended(row: ForgeIssue, api: IssuesApi, plan: Plan) -> int:
    """The outcome, once per end of the plan (a retried plan that ends again is told)."""
    key = f"{plan.pk}:{plan.status}:{plan.finished_at.isoformat() if plan.finished_at else ''}"
    if row.outcome_posted == key[:100]:
        return 0
    merges = dict(
        MergeRequest.objects.filter(task__plan=plan, status=MergeStatus.MERGED).values_list(
            "task_id", "merge_commit"
        )
    )
    pulls: dict[int, list[str]] = {}
    for task_id, url in ForgePullRequest.objects.filter(task__plan=plan).values_list(
        "task_id", "url"
    ):
        if url and url not in pulls.setdefault(task_id, []):
            pulls[task_id].append(url)
    _post(row, api, texts.outcome_comment(plan=plan, merges=merges, pulls=pulls))
    done = plan.status == PlanStatus.DONE
    _update(
        row,
        state=IssueState.DONE if done else IssueState.FAILED,
        reason=plan.status_reason[:1000] or plan.status,
        outcome_posted=key[:100],
    )
    return 1
