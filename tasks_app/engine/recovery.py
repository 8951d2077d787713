"""Recovery, a person's act on a task: retry, resume, cancel or skip (web board and CLI).

Each is one logged lifecycle move with the person's ``Actor``, taken under the lock
of the task's schedule row — the lock a unit's claim takes — so it never races a unit
starting. A task whose unit is running (in progress, verifying) can be cancelled or
stopped after its step (``tasks_app.engine.stopping``: the unit honours it); the other
actions are refused for it.

- ``task_retry``: failed → todo, a new attempt. The failed attempt's worktree and
  branch are removed (checked gone), ``Task.branch_attempt`` grows by one so the next
  unit starts on a fresh branch off the base (``sf/p<plan>/<key>/<attempt>``), retries
  and checkpoint start over, dependents held by its failure are released, and a
  finished plan and session re-open (``tasks_app.completion.plan_reopen``).
- ``task_resume``: paused → todo, the work so far kept (worktree, branch, retries).
- ``task_stop``: a running task is paused after its current step, its work kept.
- ``task_cancel``: → cancelled; worktree and branch go, nothing is merged (a running
  task's unit is cut and its worktree kept for inspection). Its
  dependents never run unless they depend on it with ``always``.
- ``task_skip``: todo | blocked | paused | failed → skipped; worktree and branch go,
  nothing is merged. Skipped counts as finished without a merge: dependents waiting
  for its success (or ``always``) proceed, those waiting for its failure never run.

Cancel and skip re-open a finished plan and settle it again by the same rules
(``tasks_app.completion``): skipping the failed task of a failed plan lets its
dependents run; cancelling it leaves the plan cancelled instead of failed.

Git is not transactional: the worktree is removed after the status check and before
the database writes, inside the transaction, so a git error changes nothing recorded.
Each announces ``session_runnable`` on commit (work may follow) and settles the plan.
"""

from __future__ import annotations

from collections.abc import Collection

from django.db import transaction
from django.db.models import F

from agents_app.models import AgentSession, PauseCause
from agents_app.services import session_set_paused
from sf_core.actors import Actor
from sf_core.errors import InvalidTransition
from tasks_app.completion import plan_reopen, plan_settle
from tasks_app.engine.dispatch import dispatch_on_commit
from tasks_app.engine.record import workspace_remove
from tasks_app.engine.stopping import stop_request
from tasks_app.lifecycle import RECOVERY_ACTIONS, task_transition
from tasks_app.models import ScheduleStatus, StopKind, Task, TaskSchedule, TaskStatus
from tasks_app.services import dependents_release, schedule_ready
from tasks_app.workspaces import workspace_of

S = TaskStatus
RETRYABLE = RECOVERY_ACTIONS["retry"]
RESUMABLE = RECOVERY_ACTIONS["resume"]
SKIPPABLE = RECOVERY_ACTIONS["skip"]
CANCELLABLE = RECOVERY_ACTIONS["cancel"]


def task_retry(*, task: Task, actor: Actor, reason: str = "") -> Task:
    """Run a failed task again from a fresh branch (see the module docstring)."""
    why = f"retry asked by {actor}" + (f": {reason}" if reason else "")
    with transaction.atomic():
        task = _locked(task, RETRYABLE, "retried")
        workspace_remove(workspace_of(task))
        Task.objects.filter(pk=task.pk).update(
            branch_attempt=F("branch_attempt") + 1, retry_count=0, checkpoint_ref=""
        )
        task.refresh_from_db()
        task_transition(task=task, to=S.TODO, reason=why, actor=actor)
        _schedule_again(task)
        plan_reopen(plan=task.plan, reason=f"task {task.key}: {why}", actor=actor)
        dependents_release(plan=task.plan, actor=actor)
        schedule_ready(plan=task.plan)
        _lift_assisted_pause(task, actor)
        dispatch_on_commit(task.plan.session_id)
    return task


def task_resume(*, task: Task, actor: Actor, reason: str = "") -> Task:
    """Put a paused task back to todo with its work so far (its worktree and branch stay:
    the next unit goes on from them). Under assisted run control the session's pause is
    lifted as a retry's is; any other session pause stays, and the reason says so."""
    why = f"resumed by {actor}" + (f": {reason}" if reason else "")
    with transaction.atomic():
        task = _locked(task, RESUMABLE, "resumed")
        _lift_assisted_pause(task, actor)
        session = AgentSession.objects.get(pk=task.plan.session_id)
        if session.paused:
            why += "; it runs when the session does (the session is paused)"
        task_transition(task=task, to=S.TODO, reason=why, actor=actor)
        _schedule_again(task)
        schedule_ready(plan=task.plan)
        dispatch_on_commit(task.plan.session_id)
    return task


def task_cancel(*, task: Task, actor: Actor, reason: str = "") -> Task:
    """Cancel a task: final, nothing merged (module docstring). A running one is asked to
    stop now (``stopping``): its unit ends cancelled, its worktree kept."""
    with transaction.atomic():
        running = _running(task)
        if running is not None:
            return stop_request(task=running, actor=actor, kind=StopKind.CANCEL, reason=reason)
    why = f"cancelled by {actor}" + (f": {reason}" if reason else "")
    return _end(task, S.CANCELLED, CANCELLABLE, why, actor)


def task_stop(*, task: Task, actor: Actor, reason: str = "") -> Task:
    """Stop a running task after its current step (``stopping``): paused, resumable."""
    with transaction.atomic():
        running = _running(task)
        if running is None:
            task.refresh_from_db()
            raise InvalidTransition(
                f"task {task.key} is {task.status}; only a running task can be stopped "
                "after its step"
            )
        return stop_request(task=running, actor=actor, kind=StopKind.AFTER_STEP, reason=reason)


def _running(task: Task) -> Task | None:
    """The task, fresh and under its schedule row's lock, if a unit is running it."""
    TaskSchedule.objects.select_for_update().filter(task_id=task.pk).first()
    task = Task.objects.select_related("plan__session").get(pk=task.pk)
    return task if task.status in (S.IN_PROGRESS, S.VERIFYING) else None


def task_skip(*, task: Task, actor: Actor, reason: str = "") -> Task:
    """Go on without a task: final, nothing merged, ``success`` dependents proceed."""
    why = f"skipped by {actor}" + (f": {reason}" if reason else "")
    return _end(task, S.SKIPPED, SKIPPABLE, why, actor)


def _end(task: Task, to: str, sources: Collection[str], why: str, actor: Actor) -> Task:
    verb = str(to)
    with transaction.atomic():
        task = _locked(task, sources, verb)
        workspace_remove(workspace_of(task))
        task_transition(task=task, to=to, reason=why, actor=actor)
        TaskSchedule.objects.filter(task=task).update(
            status=ScheduleStatus.CONSUMED, enqueued_at=None
        )
        # A finished plan is judged again: re-opened, then settled by the same rules.
        plan_reopen(plan=task.plan, reason=f"task {task.key}: {why}", actor=actor)
        dependents_release(plan=task.plan, actor=actor)
        plan_settle(plan_id=task.plan_id, actor=actor)
        dispatch_on_commit(task.plan.session_id)
    return task


def _locked(task: Task, sources: Collection[str], verb: str) -> Task:
    """The task, fresh, under its schedule row's lock; refused unless in ``sources``."""
    TaskSchedule.objects.select_for_update().filter(task_id=task.pk).first()
    task = Task.objects.select_related("plan__session").get(pk=task.pk)
    if task.status in (S.IN_PROGRESS, S.VERIFYING):
        raise InvalidTransition(
            f"task {task.key} is {task.status}: a unit is running; stop the session "
            f"(/stop) and then it can be {verb}"
        )
    if task.status not in sources:
        accepted = ", ".join(sorted(sources))
        raise InvalidTransition(
            f"task {task.key} is {task.status}; only a task that is {accepted} can be {verb}"
        )
    return task


def _schedule_again(task: Task) -> None:
    """Back to waiting: ``schedule_ready`` marks it due when its blockers clear."""
    TaskSchedule.objects.filter(task=task).update(
        status=ScheduleStatus.CONSUMED, claimed_by="", claimed_at=None, enqueued_at=None
    )


def _lift_assisted_pause(task: Task, actor: Actor) -> None:
    """Under assisted run control the last unit paused the session; asking for a retry
    is asking for one more unit (as ``/next`` is). Any other pause stays."""
    session = AgentSession.objects.get(pk=task.plan.session_id)
    if session.paused and session.pause_cause == PauseCause.ASSISTED:
        session_set_paused(
            session=session, paused=False, reason=f"retry of {task.key}", actor=actor
        )


RECOVERY = {
    "retry": task_retry,
    "resume": task_resume,
    "stop": task_stop,
    "cancel": task_cancel,
    "skip": task_skip,
}
