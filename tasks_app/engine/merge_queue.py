"""The merge queue: nothing unverified reaches the base branch.

An approved task enters its project's queue (``MergeRequest``). Entries of a project's
base branch are merged one at a time, first approved first, under an advisory lock (a
process that finds it held leaves its entry to the holder, which takes every queued
entry before it lets go, and looks once more after). For each entry the task branch
is merged onto the current base head without touching any ref (``merge_compute``),
the candidate (its entry now ``verifying``) is checked out in a scratch worktree, and
the task's verify commands plus the project's ``check_command`` run there through the
same gate and sandbox as a unit's (``verification.verify``). Only a passing tree
moves the base ref, by compare-and-swap; if the base moved meanwhile (a push from
outside SF) the merge is computed and verified again. A failing tree sends the task
back to its agent (a retry while retries remain) with the merged tree's output, and
its branch is fast-forwarded to that tree so the agent sees it (under a message of its
own, not ``sf: merge``: main reaches it through the task's next merge, its only one).

Merged once: a second run of an entry (a message redelivered or sent again while the
lane lock was lost with its connection) changes nothing. An entry is settled by a
conditional update of an active row (``EntrySettled`` otherwise: that run's transaction
rolls back), and the base moves only for an entry still active under its row lock, and
not at all when it holds the checkpoint already (a merge that landed without its row).

On workers (a session driven by Celery with a broker and a worker alive) the queue
runs in the ``tasks_app.merge_queue_run`` Celery task, sent by name; otherwise inline,
in the process that approved (headless, replay, the embedded default).
"""

from __future__ import annotations

import logging
import time
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import F
from django.utils import timezone

from agents_app.models import AgentSession, Project, SessionDriver
from sf_core.actors import Actor
from sf_core.git import GitError, git, git_ok
from sf_core.live import broadcast
from sf_core.queues import WorkKind, queue_for
from tasks_app.completion import plan_settle
from tasks_app.engine import extensions
from tasks_app.engine.attempt_choice import attempt_branches_remove
from tasks_app.engine.broker import send_by_name
from tasks_app.engine.dispatch import dispatch_on_commit
from tasks_app.engine.record import base_publish, commit_push, merge_sync, workspace_remove
from tasks_app.engine.verification import Verification, verify
from tasks_app.engine.worktrees import (
    MergeResult,
    WorktreeTampered,
    commit_reworded,
    merge_compute,
    merge_publish,
    scratch_worktree_add,
    scratch_worktree_remove,
    worktree_checked,
)
from tasks_app.lifecycle import task_groups, task_transition
from tasks_app.models import (
    ACTIVE_MERGE_STATUSES,
    HoldReason,
    MergeRequest,
    MergeStatus,
    ScheduleStatus,
    Task,
    TaskSchedule,
    TaskStatus,
    Unit,
    Worker,
)
from tasks_app.workspaces import Workspace, workspace_of

logger = logging.getLogger("sf.merge")
MERGE_QUEUE_RUN_TASK = "tasks_app.merge_queue_run"  # tasks_app/tasks.py
LANE_LOCK = zlib.crc32(b"sf.merge_queue") - 2**31  # the advisory locks' namespace (an int4)
MAX_REDOS = 3  # the base moved under a verification this often: refuse, do not spin
MERGED_TREE_FAILED = "the merged tree failed verification"


def merge_enqueue(*, task: Task, actor: Actor) -> MergeRequest:
    """Put an approved ``task`` in its project's merge queue (once: an entry already
    queued or verifying is returned as it is)."""
    task.refresh_from_db()  # the commit approved is the checkpoint as it is now
    project = Project.objects.get(pk=task.plan.session.project_id)
    active = MergeRequest.objects.filter(task=task, status__in=ACTIVE_MERGE_STATUSES)
    try:
        with transaction.atomic():
            entry = MergeRequest.objects.create(
                project=project,
                base_branch=project.base_branch,
                task=task,
                commit=task.checkpoint_ref,
                actor_kind=actor.kind,
                actor_user=actor.user,
                actor_label=actor.label,
            )
            _moved(task)
            return entry
    except IntegrityError:  # merge_one_active_per_task: approved twice at once
        return active.get()


def _moved(task: Task) -> None:
    """An entry of ``task`` entered the queue or a new stage of it: the pages that show
    the task's merge (its unit page, the boards) render it again."""
    for group in task_groups(task):
        broadcast(group, "tasks.changed", task_id=task.pk)


def merge_queue_kick(*, project_id: int, session: AgentSession) -> None:
    """Process the project's queue: on the workers when they drive ``session`` and one
    is alive (after commit, by name), else here and now. With no worker alive, a
    message would wait for one while the task sits approved; merging here is what the
    merge did before the queue (and what the test suite, with no worker, relies on)."""
    on_workers = session.driver == SessionDriver.WORKERS and not settings.CELERY_TASK_ALWAYS_EAGER
    if on_workers and _worker_alive():
        _send(project_id)
        return
    merge_queue_run(project_id=project_id)


def _worker_alive() -> bool:
    cutoff = timezone.now() - settings.SF_WORKER_STALE_AFTER
    return Worker.objects.filter(stopped_at__isnull=True, last_heartbeat_at__gte=cutoff).exists()


def _send(project_id: int) -> None:
    # By name: the engine never imports the Celery interface module (tasks_app.tasks).
    # Not sent (the broker down): the sweep sends the waiting queue again.
    queue = queue_for(WorkKind.SHORT)  # never behind a unit (sf_core.queues)
    send = partial(send_by_name, MERGE_QUEUE_RUN_TASK, args=[project_id], queue=queue)
    transaction.on_commit(send)


# When this process last sent each project's queue again: at most one resend of a
# project per SF_REDISPATCH_AFTER and process, however often the sweep runs, so that a
# merge waiting behind a long queue of units is not joined by a duplicate every sweep.
_resent: dict[int, float] = {}


def merge_queue_resend() -> int:
    """The sweep's part: queues of worker-driven sessions with an entry waiting longer
    than ``SF_REDISPATCH_AFTER`` (a lost message), or verifying that long (its worker
    died mid-merge or its run raised: the lane lock went with it), are sent to the
    workers again. A duplicate is harmless: it finds the queue held (the advisory lock
    of a live holder) or empty. Returns how many were sent."""
    if settings.CELERY_TASK_ALWAYS_EAGER:
        return 0  # no workers: the approving process ran the queue itself
    after = settings.SF_REDISPATCH_AFTER.total_seconds()
    cutoff = timezone.now() - settings.SF_REDISPATCH_AFTER
    waiting = MergeRequest.objects.filter(
        status__in=ACTIVE_MERGE_STATUSES,
        created_at__lt=cutoff,
        task__plan__session__driver=SessionDriver.WORKERS,
    )
    now = time.monotonic()
    projects = [
        project_id
        for project_id in sorted(set(waiting.values_list("project_id", flat=True)))
        if now - _resent.get(project_id, -after) >= after
    ]
    for project_id in projects:
        _resent[project_id] = now
        _send(project_id)
    return len(projects)


def merge_queue_run(*, project_id: int) -> int:
    """Merge the queued entries of the project's base branch in order until none is
    left, or another process holds the queue (it takes ours too). Returns how many
    were processed."""
    project = Project.objects.get(pk=project_id)
    processed = 0
    while True:
        with _lane_lock(project) as held:
            if not held:
                return processed
            while (entry := _next_entry(project)) is not None:
                try:
                    _merge_one(entry, project)
                except (GitError, OSError) as exc:  # a full disk, not the task's doing
                    return processed + _put_back(entry, exc)
                except EntrySettled as exc:  # a second run of the entry: nothing to do
                    logger.warning("merge of %s: %s", entry.task.key, exc)
                    continue
                processed += 1
                _after(entry)
        # An approval that found the lane held after our last look and before we let
        # go left its entry to us: look once more now that the lock is free.
        if _next_entry(project) is None:
            return processed


def _put_back(entry: MergeRequest, error: BaseException) -> int:
    """A system fault (``git worktree add`` of the scratch tree on a full disk) stopped
    the entry: it waits queued, and the sweep sends the lane again after
    SF_REDISPATCH_AFTER. Returns 0: nothing was processed."""
    logger.warning("merge of %s put back in the queue: %s", entry.task.key, error)
    MergeRequest.objects.filter(pk=entry.pk, status=MergeStatus.VERIFYING).update(
        status=MergeStatus.QUEUED, output=f"put back after a system fault: {error}"[:20_000]
    )
    return 0


def _next_entry(project: Project) -> MergeRequest | None:
    """The lane's first entry; one left verifying was a lock holder's that died."""
    return (
        MergeRequest.objects.filter(
            project=project, base_branch=project.base_branch, status__in=ACTIVE_MERGE_STATUSES
        )
        .select_related("task__plan", "actor_user")
        .order_by("pk")
        .first()
    )


@contextmanager
def _lane_lock(project: Project) -> Iterator[bool]:
    """One merge at a time per project and base branch: a PostgreSQL advisory lock of
    the connection (not a transaction: the verification can take minutes, and a row
    lock held that long would stall everything else that locks the project, such as
    the skills sync before every unit). A dead holder's connection closes and frees it.
    Without PostgreSQL (the embedded SQLite default, one writer at a time) there is
    no lock to take."""
    if connection.vendor != "postgresql":
        yield True
        return
    key = lane_key(project)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", key)
        held = bool(cursor.fetchone()[0])
    try:
        yield held
    finally:
        if held:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_unlock(%s, %s)", key)


def lane_key(project: Project) -> list[int]:
    """The advisory lock of the project's base branch: two int4s."""
    return [LANE_LOCK, zlib.crc32(f"{project.pk}/{project.base_branch}".encode()) - 2**31]


def _merge_one(entry: MergeRequest, project: Project) -> None:
    task = entry.task
    if task.status != TaskStatus.REVIEW:  # cancelled while queued
        return _finish(entry, MergeStatus.REFUSED, f"the task is {task.status}, not in review")
    ws = workspace_of(task)
    message = f"sf: merge {task.key}: {task.title}"
    for _ in range(MAX_REDOS):
        merge_sync(ws)  # record mode: the base and the branch as the remote has them now
        candidate = merge_compute(ws, commit=entry.commit or None, message=message)
        if not candidate.merged:
            return _refuse(entry, task, candidate.reason)
        if candidate.already:
            return _merged(entry, task, candidate)
        verification = _verify_candidate(entry, task, ws, candidate, project)
        if verification is not None and not verification.passed:
            return _send_back(entry, task, ws, candidate.commit)
        if _publish(entry, task, ws, candidate):
            return None
        logger.info("merge of %s: %s moved; verifying again", task.key, ws.base)
    return _refuse(entry, task, f"{ws.base} kept moving during {MAX_REDOS} verifications")


@transaction.atomic
def _publish(entry: MergeRequest, task: Task, ws: Workspace, candidate: MergeResult) -> bool:
    """Move the base to the verified candidate and settle the entry; False when the
    base moved meanwhile (compute and verify again). The task row is locked: a person
    cancelling it now waits the moment this takes, never a verification. The entry's
    row is locked too and must still be active: a second run of the same entry (a lane
    lock lost with its connection, a redelivery) that verified the same candidate
    meanwhile publishes nothing and leaves the first run's record as it is."""
    task = Task.objects.select_for_update().select_related("plan").get(pk=task.pk)
    if not _claimed(entry):
        logger.warning("merge of %s: its entry was settled by another run", task.key)
        return True
    if task.status != TaskStatus.REVIEW:
        _finish(entry, MergeStatus.REFUSED, f"the task became {task.status} while verified")
        return True
    if (base := _containing_base(ws, entry.commit)) is not None:  # landed, not recorded
        _merged(entry, task, MergeResult(merged=True, commit=base, already=True))
        return True
    publish = base_publish if ws.remote else merge_publish
    published = publish(ws, candidate, commit=entry.commit)
    if published.merged:
        _merged(entry, task, published)
        return True
    if published.moved:
        return False
    _refuse(entry, task, published.reason)
    return True


def _containing_base(ws: Workspace, commit: str) -> str | None:
    """The base head, if it contains ``commit`` already (a merge of it landed and its
    row was not written: the process died in between): recorded, never merged again."""
    base = git("rev-parse", f"refs/heads/{ws.base}", cwd=ws.repo)
    return base if git_ok("merge-base", "--is-ancestor", commit, base, cwd=ws.repo) else None


def _claimed(entry: MergeRequest) -> bool:
    """Lock the entry's row; whether it is still active (not merged, refused or sent
    back by another run of the lane since this one read it)."""
    status = MergeRequest.objects.select_for_update().values_list("status", flat=True)
    return status.get(pk=entry.pk) in ACTIVE_MERGE_STATUSES


def _verify_candidate(
    entry: MergeRequest, task: Task, ws: Workspace, candidate: MergeResult, project: Project
) -> Verification | None:
    """Run the task's verify commands and the project's check on the merged tree, in a
    scratch worktree; None when there is nothing to run."""
    commands = list(task.verify)
    check = project.parsed_policy.check_command.strip()
    if check:
        commands.append(check)
    entry.status, entry.base_head = MergeStatus.VERIFYING, candidate.base_head
    entry.started_at = entry.started_at or timezone.now()
    verifying = MergeRequest.objects.filter(pk=entry.pk, status__in=ACTIVE_MERGE_STATUSES)
    if not verifying.update(
        status=entry.status,
        base_head=entry.base_head,
        attempts=F("attempts") + 1,
        started_at=entry.started_at,
    ):  # settled by another run since this one read it: never made active again
        raise EntrySettled(f"merge request {entry.pk} of {task.key} was settled already")
    entry.attempts += 1
    _moved(task)
    if not commands:
        return None
    scratch = scratch_worktree_add(ws, name=f"m{entry.pk}", commit=candidate.commit)
    try:
        last_unit = Unit.objects.filter(task=task).order_by("-attempt").first()
        verification = verify(
            scratch,
            commands,
            session_id=task.plan.session_id,
            unit_id=last_unit.pk if last_unit else None,
            accepted_by=task.plan.accepted_by,
        )
    finally:
        scratch_worktree_remove(ws, scratch)
    entry.output = verification.report()
    entry.save(update_fields=["output"])
    return verification


class EntrySettled(Exception):
    """Another run of the lane settled this entry first: this run's outcome is dropped
    (its transaction rolls back), so an entry is settled once and its task moved once."""


def _finish(entry: MergeRequest, status: MergeStatus, reason: str, merge_commit: str = "") -> None:
    """Settle the entry, once: a conditional update of an active row."""
    entry.status, entry.reason, entry.merge_commit = status, reason, merge_commit
    entry.finished_at = timezone.now()
    settled = MergeRequest.objects.filter(pk=entry.pk, status__in=ACTIVE_MERGE_STATUSES).update(
        status=status, reason=reason, merge_commit=merge_commit, finished_at=entry.finished_at
    )
    if not settled:
        raise EntrySettled(f"merge request {entry.pk} of {entry.task.key} was settled already")


@transaction.atomic
def _merged(entry: MergeRequest, task: Task, result: MergeResult) -> None:
    verb = "already merged" if result.already else f"merged as {result.commit[:12]}"
    _finish(entry, MergeStatus.MERGED, verb, result.commit)
    task.refresh_from_db()
    task_transition(
        task=task,
        to=TaskStatus.DONE,
        reason=f"approved by {entry.actor}; {verb}",
        actor=entry.actor,
    )
    TaskSchedule.objects.filter(task=task).update(status=ScheduleStatus.CONSUMED)
    for hook in extensions.merged:  # e.g. a skill SF proposed is in the base branch now
        hook(task)


@transaction.atomic
def _refuse(entry: MergeRequest, task: Task, reason: str) -> None:
    """Fail-closed: the task is blocked with the reason; its worktree and branch stay."""
    _finish(entry, MergeStatus.REFUSED, reason)
    task.refresh_from_db()
    task_transition(
        task=task,
        to=TaskStatus.BLOCKED,
        reason=f"merge refused: {reason}",
        actor=entry.actor,
        hold=HoldReason.MERGE_REFUSED,
    )


@transaction.atomic
def _send_back(entry: MergeRequest, task: Task, ws: Workspace, merged: str) -> None:
    """The merged tree failed: the task goes back to its agent (a retry while retries
    remain, else failed), its branch fast-forwarded to the tree that failed."""
    # On the task's branch the failed candidate is not a merge: the base reaches it
    # through the task's next merge, which must stay its only ``sf: merge``.
    message = f"sf({task.key}): {ws.base} merged in; {MERGED_TREE_FAILED}"
    merged = commit_reworded(ws, merged, message)
    _finish(entry, MergeStatus.SENT_BACK, MERGED_TREE_FAILED)
    task.refresh_from_db()
    actor = Actor.system("merge queue")
    spent = not Task.objects.filter(pk=task.pk, retry_count__lt=F("max_retries")).update(
        retry_count=F("retry_count") + 1
    )
    task.refresh_from_db()
    if spent:
        reason = f"{MERGED_TREE_FAILED}; {task.max_retries} retries spent"
        task_transition(task=task, to=TaskStatus.FAILED, reason=reason, actor=actor)
        return
    reason = f"{MERGED_TREE_FAILED} on {ws.base} (retry {task.retry_count} of {task.max_retries})"
    task_transition(task=task, to=TaskStatus.RETRYING, reason=reason, actor=actor)
    commit_push(ws, merged)  # record mode: on the record's branch, for whichever host
    try:  # the agent works on the merged tree from now on
        git("merge", "--ff-only", "--quiet", merged, cwd=worktree_checked(ws, missing_ok=True))
    except (GitError, WorktreeTampered) as exc:
        logger.warning("task %s: its branch stays where it was: %s", task.key, exc)
    TaskSchedule.objects.filter(task=task).update(
        status=ScheduleStatus.DUE,
        due_at=timezone.now(),
        consumed_at=None,
        enqueued_at=None,
    )
    dispatch_on_commit(task.plan.session_id)


def _after(entry: MergeRequest) -> None:
    """After the entry's transaction: a merged task's worktree goes; the plan settles."""
    task = entry.task
    if entry.status == MergeStatus.MERGED:
        try:
            workspace_remove(workspace_of(task))
            attempt_branches_remove(task)  # best-of-N: the attempts kept for comparison
        except GitError as exc:  # merged and done: a leftover tree must not undo that
            logger.warning("task %s merged; its worktree stays: %s", task.key, exc)
    plan_settle(plan_id=task.plan_id, actor=entry.actor)  # the last task done ends the plan
