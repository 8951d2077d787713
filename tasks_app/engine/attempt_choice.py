"""Best-of-N: where attempts work, how the chosen one becomes the task's work, a
person's pick of another, and the attempts' branches going when the task is merged.

The task's own worktree and branch (``workspace_of``) carry the chosen attempt: its
branch is moved to the attempt's commit (attempts branch off it, so this only moves it
forward), and its checkpoint names that commit. Review, the merge queue, a merged
tree sent back to its agent: all go on from there exactly as after a single unit.
"""

from __future__ import annotations

import logging

from django.db import transaction
from django.utils import timezone

from sf_core.actors import Actor
from sf_core.errors import InvalidTransition, NotAllowed
from sf_core.git import GitError, git
from sf_core.live import broadcast
from tasks_app.engine.worktrees import worktree_checked, worktree_discard
from tasks_app.lifecycle import task_groups, task_transition
from tasks_app.models import (
    ACTIVE_MERGE_STATUSES,
    AttemptRound,
    MergeRequest,
    MergeStatus,
    Task,
    TaskStatus,
    Unit,
)
from tasks_app.ranking import choice_reason, ranked_from_rows
from tasks_app.workspaces import Workspace, workspace_for, workspace_of

logger = logging.getLogger("sf.engine")


def attempt_workspace(ws: Workspace, task: Task, unit: Unit) -> Workspace:
    """The worktree and branch of one attempt of a round, off the task's branch:
    ``sf/p<plan>/<key>.r<round>/<attempt>``."""
    return workspace_for(
        repo=ws.repo,
        project_id=task.plan.session.project_id,
        plan_id=task.plan_id,
        key=f"{task.key}.r{unit.round_id}",
        base=ws.branch,
        attempt=unit.attempt,
        private=ws.private,
    )


def attempt_keep(*, task: Task, winner: Unit, reason: str) -> None:
    """The winner's commit becomes the task's work; the task goes to review (inside the
    caller's transaction; the caller starts the review after it)."""
    _task_moved_to(task, winner)
    n = task.best_of
    task_transition(task=task, to=TaskStatus.VERIFYING, reason=f"best-of-{n}: attempts finished")
    task_transition(task=task, to=TaskStatus.REVIEW, reason=f"verification passed; {reason}")


def _task_moved_to(task: Task, unit: Unit) -> None:
    ws = workspace_of(task)
    git("reset", "--hard", "--quiet", unit.checkpoint_commit, cwd=worktree_checked(ws))
    Task.objects.filter(pk=task.pk).update(checkpoint_ref=unit.checkpoint_commit)


def attempt_pick(*, unit: Unit, actor: Actor, note: str = "") -> AttemptRound:
    """A person keeps ``unit`` instead of its round's winner, before the task is merged:
    its commit replaces the winner's as the task's work, the reason names them. Refused,
    with what to do, once the task is merged, queued for merge or not in review, and
    for an attempt that did not pass verification or changed nothing."""
    with transaction.atomic():
        task = Task.objects.select_for_update().select_related("plan").get(pk=unit.task_id)
        unit = Unit.objects.select_related("round").get(pk=unit.pk)
        round_ = _pickable_round(task, unit)
        if round_.winner_id == unit.pk:
            return round_
        before = round_.winner.attempt if round_.winner else None
        _task_moved_to(task, unit)
        words = f"attempt {unit.attempt} picked by {actor}"
        if before is not None:
            words += f" instead of attempt {before}"
        if note.strip():
            words += f": {note.strip()[:500]}"
        words += f" (the ranking said: {choice_reason(ranked_from_rows(round_.ranking))})"
        round_.winner, round_.reason, round_.chosen_at = unit, words, timezone.now()
        round_.chosen_kind, round_.chosen_label = actor.kind, actor.label
        round_.chosen_user = actor.user
        round_.save()
        Task.objects.filter(pk=task.pk).update(status_reason=f"in review; {words}")
        for group in task_groups(task):
            broadcast(group, "tasks.changed", task_id=task.pk)
    return round_


def _pickable_round(task: Task, unit: Unit) -> AttemptRound:
    round_ = unit.round
    if round_ is None:
        raise NotAllowed(f"unit {unit.pk} is not an attempt of a best-of-N round")
    if round_.pk != task.rounds.order_by("-pk").values_list("pk", flat=True).first():
        raise NotAllowed(f"attempt {unit.attempt} is from an earlier round of {task.key}")
    merged = MergeRequest.objects.filter(task=task, status=MergeStatus.MERGED).first()
    if merged is not None or task.status == TaskStatus.DONE:
        kept = f"attempt {round_.winner.attempt}" if round_.winner else "its chosen attempt"
        commit = f" as {merged.merge_commit[:12]}" if merged and merged.merge_commit else ""
        raise InvalidTransition(
            f"task {task.key} is merged already{commit} with {kept}: a pick can no longer "
            "replace it; start a new task to change the work"
        )
    if MergeRequest.objects.filter(task=task, status__in=ACTIVE_MERGE_STATUSES).exists():
        raise InvalidTransition(
            f"task {task.key} is in the merge queue with attempt "
            f"{round_.winner.attempt if round_.winner else '?'}: wait for its merge to end"
        )
    if task.status != TaskStatus.REVIEW:
        raise InvalidTransition(
            f"task {task.key} is {task.status}: an attempt is picked while it waits for review"
        )
    if not unit.verification_passed or not unit.checkpoint_commit:
        raise NotAllowed(
            f"attempt {unit.attempt} did not pass verification or changed nothing: "
            "only a verified attempt can be picked"
        )
    return round_


def attempts_tidy(ws: Workspace, task: Task, units: list[Unit]) -> None:
    """A round's worktrees go once it is settled (their patches are on their units);
    their branches stay, for a person's pick, until the task is merged."""
    for unit in units:
        aws = attempt_workspace(ws, task, unit)
        try:
            worktree_discard(aws.repo, aws.path)
        except (GitError, OSError) as exc:
            logger.warning("attempt %s of %s: its worktree stays: %s", unit.attempt, task.key, exc)


def attempt_branches_remove(task: Task) -> None:
    """The attempts' branches of a merged task: its work is in the base branch now."""
    units = list(Unit.objects.filter(task=task, round__isnull=False))
    if not units:
        return
    ws = workspace_of(task)
    for unit in units:
        branch = attempt_workspace(ws, task, unit).branch
        git("branch", "-D", branch, cwd=ws.repo, check=False)
