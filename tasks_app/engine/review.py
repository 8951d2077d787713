"""Review and merge: completion always passes through review, even when the profile
approves it automatically; an approved task is merged fail-closed."""

from __future__ import annotations

import logging

from django.urls import reverse

from agents_app.axes import PermissionProfile
from agents_app.models import AgentSession
from sf_core.actors import Actor
from sf_core.errors import InvalidTransition, NotAllowed
from sf_core.notices import Notice, NoticeKind, notice_raise
from tasks_app.engine.dispatch import dispatch_on_commit
from tasks_app.engine.merge_queue import merge_enqueue, merge_queue_kick
from tasks_app.lifecycle import task_transition
from tasks_app.models import RiskLevel, Task, TaskStatus, TaskTransition
from tasks_app.services import schedule_ready

logger = logging.getLogger("sf.engine")
AUTO_APPROVE_PROFILES = frozenset({PermissionProfile.TRUSTED, PermissionProfile.UNRESTRICTED})
AUTO_APPROVE_RISKS = frozenset({RiskLevel.LOW, RiskLevel.MEDIUM})


def auto_approves(*, profile: str, risk_level: str) -> bool:
    """Trusted and unrestricted sessions approve low- and medium-risk work themselves;
    high and critical risk always wait for a person."""
    return profile in AUTO_APPROVE_PROFILES and risk_level in AUTO_APPROVE_RISKS


def review_start(*, task: Task, person: bool = False) -> None:
    """A task has just entered review: approve it automatically when allowed, unless
    ``person`` (what reviewed it first asks for a person: ``extensions.verified``)."""
    session = AgentSession.objects.get(pk=task.plan.session_id)
    auto = auto_approves(profile=session.permission_profile, risk_level=task.risk_level)
    if auto and not person:
        task_approve(task=task, actor=Actor.system(f"auto ({session.permission_profile} profile)"))
        return
    _review_waiting(task, session)


def _review_waiting(task: Task, session: AgentSession) -> None:
    """A person must review: one notice per entry into review (its transition row)."""
    entered = (
        TaskTransition.objects.filter(task=task, to_status=TaskStatus.REVIEW)
        .order_by("-pk")
        .values_list("pk", flat=True)
        .first()
    )
    notice_raise(
        Notice(
            kind=NoticeKind.REVIEW_WAITING,
            dedupe_key=f"review:{entered}",
            project_id=session.project_id,
            session_id=session.pk,
            task_id=task.pk,
            text=f"{task.key} {task.title} waits for review ({task.risk_level} risk)",
            url=reverse("session-detail", args=[session.pk]),
            payload={"task": task.key, "risk": task.risk_level},
        )
    )


def task_approve(*, task: Task, actor: Actor) -> Task:
    """Approve a task in review: it enters its project's merge queue
    (``tasks_app.engine.merge_queue``), which merges it only once the merged tree
    passes its verify commands. The merge is fail-closed: on a conflict, an empty
    result or any error the task is blocked with the reason and its worktree and branch
    are kept; on a failing merged tree it goes back to its agent. Inline drivers
    process the queue before this returns; on workers it runs there."""
    task.refresh_from_db()
    if task.status != TaskStatus.REVIEW:
        raise InvalidTransition(f"task {task.key} is {task.status}, not in review")
    merge_enqueue(task=task, actor=actor)
    session = AgentSession.objects.get(pk=task.plan.session_id)
    merge_queue_kick(project_id=session.project_id, session=session)
    task.refresh_from_db()
    return task


def task_request_changes(*, task: Task, actor: Actor, reason: str) -> Task:
    """Send a task in review back to todo with the reviewer's words as context; the
    session may run it again at once (``session_runnable``)."""
    if not reason.strip():
        raise NotAllowed("say what should change")
    task_transition(
        task=task, to=TaskStatus.TODO, reason=f"changes requested by {actor}: {reason}", actor=actor
    )
    schedule_ready(plan=task.plan)
    dispatch_on_commit(task.plan.session_id)
    return task
