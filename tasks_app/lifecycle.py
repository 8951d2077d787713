"""The task lifecycle: one table of allowed moves and one service that applies a move.

    todo → in_progress → verifying → review → done
    in_progress | verifying → retrying → in_progress
    in_progress | verifying | retrying → failed        (retries spent, or gave up)
    review → todo                                      (changes requested)
    review → retrying | failed                         (the merged tree failed verification
                                                        in the merge queue)
    todo | in_progress | verifying | retrying | review → blocked   (a person, a dependency,
                                                                    a merge conflict)
    blocked → todo | in_progress | review              (unblocked: back where it was)
    todo | in_progress | retrying | blocked → paused;  paused → todo
    failed → todo                                      (a person asks for another try)
    todo | blocked | paused | failed → skipped         (a person goes on without it)
    every non-final status → cancelled

Completion always passes through ``review``: ``done`` is reachable from nowhere else.
``done``, ``cancelled`` and ``skipped`` are final. ``skipped`` counts as finished
without a merge: a ``success`` or ``always`` dependency on it holds, a ``failure``
dependency never will (``tasks_app.scheduler.condition_met``). ``cancelled`` is the
end of the line for its dependents too: only ``always`` holds. Recovery from a failed
task (retry, cancel, skip) is ``tasks_app.engine.recovery``.
"""

from __future__ import annotations

from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from sf_core.actors import SF, Actor
from sf_core.errors import InvalidTransition
from sf_core.live import Groups, broadcast
from sf_core.notices import Notice, NoticeKind, notice_raise
from tasks_app.models import HELD_STATUSES, HoldReason, Task, TaskStatus, TaskTransition

S = TaskStatus
FINAL = frozenset({S.DONE, S.CANCELLED, S.SKIPPED})

ALLOWED: dict[str, frozenset[str]] = {
    S.TODO: frozenset({S.IN_PROGRESS, S.BLOCKED, S.PAUSED, S.CANCELLED, S.SKIPPED}),
    S.IN_PROGRESS: frozenset({S.VERIFYING, S.RETRYING, S.FAILED, S.BLOCKED, S.PAUSED, S.CANCELLED}),
    S.VERIFYING: frozenset({S.REVIEW, S.RETRYING, S.FAILED, S.BLOCKED, S.CANCELLED}),
    S.RETRYING: frozenset({S.IN_PROGRESS, S.FAILED, S.BLOCKED, S.PAUSED, S.CANCELLED}),
    S.REVIEW: frozenset({S.DONE, S.TODO, S.RETRYING, S.FAILED, S.BLOCKED, S.CANCELLED}),
    S.BLOCKED: frozenset({S.TODO, S.IN_PROGRESS, S.REVIEW, S.PAUSED, S.CANCELLED, S.SKIPPED}),
    S.PAUSED: frozenset({S.TODO, S.CANCELLED, S.SKIPPED}),
    S.FAILED: frozenset({S.TODO, S.CANCELLED, S.SKIPPED}),
    S.DONE: frozenset(),
    S.CANCELLED: frozenset(),
    S.SKIPPED: frozenset(),
}


# What a person may do to a task in each status (``tasks_app.engine.recovery``): retry a
# failed one; resume a paused one; skip one that no unit is running; cancel any that is
# not finished (a running unit is cut: ``tasks_app.engine.stopping``); stop a running
# one after its current step (paused, to be resumed).
RECOVERY_ACTIONS: dict[str, frozenset[str]] = {
    "retry": frozenset({S.FAILED}),
    "resume": frozenset({S.PAUSED}),
    "stop": frozenset({S.IN_PROGRESS}),
    "skip": frozenset({S.TODO, S.BLOCKED, S.PAUSED, S.FAILED}),
    "cancel": frozenset(
        {S.TODO, S.IN_PROGRESS, S.VERIFYING, S.RETRYING, S.REVIEW, S.BLOCKED, S.PAUSED, S.FAILED}
    ),
}
# The words of each action's button (the board, the unit page).
ACTION_LABELS = {"stop": "Stop after this step"}


def recovery_actions(status: str) -> list[str]:
    """The recovery actions open to a task in ``status``, in the order shown."""
    return [action for action, sources in RECOVERY_ACTIONS.items() if status in sources]


def allowed(from_status: str, to_status: str) -> bool:
    return to_status in ALLOWED.get(from_status, frozenset())


def task_groups(task: Task) -> list[str]:
    """Where a task's changes are broadcast: its session's board and the global board."""
    return [Groups.ALL_TASKS, Groups.tasks(task.plan.session_id)]


def task_transition(
    *, task: Task, to: str, reason: str, actor: Actor = SF, hold: HoldReason | None = None
) -> Task:
    """Move ``task`` to ``to`` and log it, or raise ``InvalidTransition`` and change nothing.

    The move is a conditional update on the status the caller saw, so two workers
    racing to move the same task cannot both succeed. ``hold`` says why a task moved
    to paused or blocked (the engine decides on it; ``reason`` is for people); a move
    anywhere else clears it.
    """
    current = task.status
    if not allowed(current, to):
        options = ", ".join(sorted(ALLOWED.get(current, ()))) or "none (final)"
        raise InvalidTransition(
            f"task {task.key}: cannot go from {current} to {to}; allowed from {current}: {options}"
        )
    now = timezone.now()
    fields: dict[str, object] = {
        "status": to,
        "status_reason": reason,
        "hold_reason": _hold_reason(to, hold),
    }
    if to == S.IN_PROGRESS and task.started_at is None:
        fields["started_at"] = now
    if to in (S.DONE, S.FAILED, S.CANCELLED, S.SKIPPED):
        fields["completed_at"] = now
    with transaction.atomic():
        updated = Task.objects.filter(pk=task.pk, status=current).update(**fields)
        if updated != 1:
            raise InvalidTransition(
                f"task {task.key}: status changed concurrently (expected {current})"
            )
        transition = TaskTransition.objects.create(
            task=task,
            from_status=current,
            to_status=to,
            reason=reason,
            actor_kind=actor.kind,
            actor_user=actor.user,
            actor_label=actor.label,
            created_at=now,
        )
        for group in task_groups(task):
            broadcast(group, "tasks.changed", task_id=task.pk)
        _notice(task, transition, hold=fields["hold_reason"])
    for name, value in fields.items():
        setattr(task, name, value)
    return task


def _hold_reason(to: str, hold: HoldReason | None) -> HoldReason:
    if to not in HELD_STATUSES:
        if hold:
            raise ValueError(f"a hold reason ({hold}) is only for paused or blocked, not {to}")
        return HoldReason.NONE
    return hold or HoldReason.PERSON


# Blocked for these is not news worth a notification: a decision's own notice covers
# approval_needed; the others follow the session (paused, stopped, ended) or a person.
QUIET_HOLDS = frozenset(
    {
        HoldReason.APPROVAL_NEEDED,
        HoldReason.SESSION_PAUSED,
        HoldReason.STOPPED,
        HoldReason.SESSION_ENDED,
        HoldReason.PERSON,
    }
)


def notice_kind(to: str, hold: str) -> NoticeKind | None:
    """What a move to ``to`` (held for ``hold``) is worth telling people, if anything."""
    if to == S.FAILED:
        return NoticeKind.TASK_FAILED
    if to == S.BLOCKED and hold == HoldReason.STUCK:
        return NoticeKind.STUCK_LOOP
    if to == S.BLOCKED and hold not in QUIET_HOLDS:
        return NoticeKind.TASK_BLOCKED
    return None


def _notice(task: Task, transition: TaskTransition, *, hold: object) -> None:
    """Raise the transition's notice in its own transaction (one per transition row)."""
    kind = notice_kind(transition.to_status, str(hold))
    if kind is None:
        return
    session = task.plan.session
    notice_raise(
        Notice(
            kind=kind,
            dedupe_key=f"transition:{transition.pk}",
            project_id=session.project_id,
            session_id=session.pk,
            task_id=task.pk,
            text=f"{task.key} {task.title}: {transition.reason}",
            url=reverse("session-detail", args=[session.pk]),
            payload={"task": task.key, "status": transition.to_status, "hold": str(hold)},
        )
    )
