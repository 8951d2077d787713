"""Work from issues (docs/forge.md, "Work from issues"): an open issue carrying the
label the project's forge policy names becomes an intent in a new session of the
project, at the policy's permission profile; SF comments on the issue with the plan,
with each pull request offered for review and with the outcome; a new comment on the
issue (not SF's own) is a follow-up to the plan's task (``features.followups``).

Polled by the engine's sweep on every worker (``issues_sweep``, beside the forge's
reviews) and by ``manage.py sf forge issues``. Nothing is done twice:

- An issue is taken once per project: ``ForgeIssue``'s unique (project, kind, issue id)
  is inserted in the same transaction as the session and its plan request, so a second
  poll, or two workers polling at once, roll back all but one.
- Following an issue holds its row (``select_for_update(skip_locked)``): one sweep at a
  time posts its comments; what was posted and read is recorded in the same
  transaction, after the forge answered. (A post whose answer is lost is posted again
  by the next sweep: at least once, never silently dropped.)

A forge that fails or answers garbage fails that project's poll (or one issue's),
logged; the sweep goes on with the other projects.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from django.db import IntegrityError, transaction

from agents_app.axes import WorkMode
from agents_app.models import Project
from agents_app.schemas import ForgeIssuesPolicy
from agents_app.services import session_create
from sf_core.actors import Actor
from sf_core.errors import SfError
from sf_core.git import GitError
from tasks_app.features.followups.services import followup_send
from tasks_app.features.forge import ForgeError
from tasks_app.features.issues import texts
from tasks_app.features.issues.api import MARK, Issue, IssuesApi, issues_api_for
from tasks_app.features.issues.outcome import current_plan, follow_plan
from tasks_app.intake import planning_start
from tasks_app.models import (
    MAX_FOLLOWUP_CHARS,
    ForgeIssue,
    IssueState,
    Plan,
    PlanStatus,
    Task,
    TaskStatus,
)

logger = logging.getLogger("sf.forge.issues")
S = TaskStatus
# Which of the plan's tasks a comment goes to: the one at work first, then the one a
# message would set going again (review: sent back; failed: retried; paused: resumed).
TARGET_ORDER = (
    S.IN_PROGRESS,
    S.VERIFYING,
    S.REVIEW,
    S.FAILED,
    S.PAUSED,
    S.RETRYING,
    S.TODO,
    S.BLOCKED,
)
FOLLOWED_PLANS = (PlanStatus.PROPOSED, PlanStatus.ACCEPTED, PlanStatus.FAILED)


@dataclass
class IssuesPolled:
    taken: int = 0  # issues that became sessions
    posted: int = 0  # comments SF posted
    followups: int = 0  # comments sent to the agent

    @property
    def total(self) -> int:
        return self.taken + self.posted + self.followups


def issues_sweep() -> int:
    """Poll every project whose forge policy takes issues; how many things were done.
    One project's failure (a forge down, garbage, a bad policy) is logged and the
    others are polled."""
    done = 0
    for project in Project.objects.filter(policy__has_key="forge").order_by("pk"):
        try:
            done += issues_poll(project=project).total
        except (SfError, GitError) as exc:
            logger.warning("issues of project %s not polled: %s", project.name, exc)
        except Exception:
            # A bug met on one project's answer must not stop the sweep.
            logger.exception("issues of project %s not polled", project.name)
    return done


def issues_poll(*, project: Project) -> IssuesPolled:
    """Take the project's new labelled issues, then follow the ones it has taken.
    Raises ``ForgeError`` when the forge's list of issues cannot be read."""
    polled = IssuesPolled()
    api = issues_api_for(project)
    forge = project.parsed_policy.forge
    if api is None or forge is None or forge.issues is None:
        return polled
    for issue in api.issues(forge.issues.label):
        if _labelled(issue, forge.issues.label):
            polled.taken += issue_take(project=project, api=api, policy=forge.issues, issue=issue)
    following = ForgeIssue.objects.filter(project=project).exclude(state=IssueState.DONE)
    for pk in following.order_by("pk").values_list("pk", flat=True):
        try:
            posted, sent = issue_follow(issue_pk=pk, api=api)
        except (ForgeError, SfError) as exc:
            logger.warning("issue %s of project %s not followed: %s", pk, project.name, exc)
            continue
        polled.posted += posted
        polled.followups += sent
    return polled


def _labelled(issue: Issue, label: str) -> bool:
    """Checked here too, not only asked of the forge: an answer that ignored the filter
    must not turn every issue into work. (Both forges compare labels ignoring case.)"""
    return label.casefold() in (name.casefold() for name in issue.labels)


def issue_take(*, project: Project, api: IssuesApi, policy: ForgeIssuesPolicy, issue: Issue) -> int:
    """A new session planning the issue's intent at the policy's profile; 0 if the
    issue was taken before (by this sweep or another)."""
    taken = ForgeIssue.objects.filter(project=project, kind=api.kind, issue_id=issue.id)
    if taken.exists():
        return 0
    comments = api.comments(issue.number)
    intent = texts.issue_intent(
        kind=api.kind, repository=api.repository, issue=issue, comments=comments
    )
    who = Actor.system(f"{api.kind}:{issue.author}"[:150])
    try:
        with transaction.atomic():
            session = session_create(
                project=project,
                title=f"{texts.FORGE_NAMES.get(api.kind, api.kind)} #{issue.number}: {issue.title}"[
                    :300
                ],
                axes={
                    "work_mode": WorkMode.PLAN,
                    "run_control": "manual",  # the plan is accepted, or not, afterwards
                    "permission_profile": policy.permission_profile,
                },
            )
            row = ForgeIssue.objects.create(
                project=project, kind=api.kind, issue_id=issue.id, number=issue.number,
                url=issue.url[:500], title=issue.title[:300], author=issue.author[:150],
                session=session, seen_comments=[c.id for c in comments],
            )  # fmt: skip
            request = planning_start(session=session, intent=intent, actor=who)
            ForgeIssue.objects.filter(pk=row.pk).update(plan_request=request)
    except IntegrityError:
        return 0  # another sweep took it first; its transaction holds the only session
    logger.info(
        "%s issue #%s of %s: session %s plans it", api.kind, issue.number, project.name, session.pk
    )
    return 1


@contextmanager
def _locked(issue_pk: int) -> Iterator[ForgeIssue | None]:
    """The issue's row, held for this transaction; None while another sweep holds it."""
    with transaction.atomic():
        found = ForgeIssue.objects.select_for_update(skip_locked=True, of=("self",))
        yield found.select_related("project", "session", "plan_request").filter(pk=issue_pk).first()


def issue_follow(*, issue_pk: int, api: IssuesApi) -> tuple[int, int]:
    """Post what changed (the plan, a pull request, the outcome), then send the issue's
    new comments to the agent: (comments posted, follow-ups sent)."""
    with _locked(issue_pk) as row:
        posted = 0 if row is None else follow_plan(row, api)
    with _locked(issue_pk) as row:
        sent = 0 if row is None else _follow_comments(row, api)
    return posted, sent


def _follow_comments(row: ForgeIssue, api: IssuesApi) -> int:
    plan = current_plan(row)
    if plan is None or plan.status not in FOLLOWED_PLANS:
        return 0  # planning (read once there is a task to take them), or nothing to do
    fresh = [c for c in api.comments(row.number) if c.id not in row.seen_comments]
    if not fresh:
        return 0
    sent = 0
    for comment in fresh:
        if MARK in comment.body or not comment.body.strip():
            continue  # SF's own, or nothing said
        task = _target(plan)
        if task is None:
            logger.info("comment %s on %s: no task takes it (%s)", comment.id, row, row.state)
            continue
        text = comment.body.strip()[:MAX_FOLLOWUP_CHARS]
        who = Actor.system(f"{api.kind}:{comment.author}"[:150])
        try:
            with transaction.atomic():
                followup_send(text=text, actor=who, task=task)
            sent += 1
        except SfError as exc:
            logger.info("comment %s on %s not sent to %s: %s", comment.id, row, task.key, exc)
    ForgeIssue.objects.filter(pk=row.pk).update(
        seen_comments=[*row.seen_comments, *(c.id for c in fresh)]
    )
    return sent


def _target(plan: Plan) -> Task | None:
    tasks = list(plan.tasks.filter(status__in=TARGET_ORDER).order_by("position"))
    tasks.sort(key=lambda task: TARGET_ORDER.index(TaskStatus(task.status)))
    return tasks[0] if tasks else None
