"""A person stops one running unit, nothing else of its session: **Cancel** or **Stop
after this step** (the board, the unit page, the API, ``sf tasks cancel|stop``).

The request is written on the unit's runtime row (``TaskRuntime.stop_*``); the unit
honours it, and only that unit: the session, its other units and its plan go on.

- Cancel: the model's answer being written (or read: a prompt still being processed)
  is cut at once, the running tool call finishes, and the unit ends ``cancelled``; the
  task ends ``cancelled`` with the person and their reason. Its worktree and branch are
  kept, checkpointed, for inspection.
- Stop after this step: the current model step and its tool calls run to their end;
  before the next model request the unit ends ``cancelled`` and the task is paused
  (``HoldReason.PERSON``: held until a person resumes it), its work so far kept:
  **Resume** goes on from it.

The running unit learns of a request twice over: its heartbeat thread polls the row
every ``POLL`` seconds and cuts a Cancel's model answer at once (``StopWatch``), and each
model step reads the row (``EngineHooks.before_model``).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from django.utils import timezone

from sf_core.actors import Actor, ActorKind
from sf_core.errors import InvalidTransition
from sf_core.live import broadcast
from tasks_app.lifecycle import task_groups
from tasks_app.models import StopKind, Task, TaskRuntime, TaskStatus

POLL = 1.0  # seconds between a running unit's reads of its stop request
RUNNING = (TaskStatus.IN_PROGRESS, TaskStatus.VERIFYING)


@dataclass(frozen=True)
class StopRequest:
    kind: str
    reason: str
    actor: Actor

    def words(self) -> str:
        """The unit's summary and the task's reason: what happened, who, why."""
        done = "cancelled" if self.kind == StopKind.CANCEL else "stopped after its step"
        return f"{done} by {self.actor}" + (f": {self.reason}" if self.reason else "")


def stop_request(*, task: Task, actor: Actor, kind: str, reason: str = "") -> Task:
    """Ask the unit running ``task`` to stop (``kind``: cancel, after_step). Refused
    when no unit runs it. A Cancel after a Stop-after-step replaces it, not the reverse."""
    if task.status not in RUNNING:
        raise InvalidTransition(f"task {task.key} is {task.status}: no unit is running it")
    if kind == StopKind.AFTER_STEP and task.status != TaskStatus.IN_PROGRESS:
        raise InvalidTransition(
            f"task {task.key} is {task.status}: its agent is done; cancel it instead"
        )
    rows = TaskRuntime.objects.filter(task=task)
    if kind == StopKind.AFTER_STEP:
        rows = rows.exclude(stop_kind=StopKind.CANCEL)
    updated = rows.update(
        stop_kind=kind,
        stop_reason=reason[:500],
        stop_actor_kind=actor.kind,
        stop_actor_label=actor.label[:150],
        stop_actor_user=actor.user,
        stop_requested_at=timezone.now(),
    )
    if not updated and not TaskRuntime.objects.filter(task=task).exists():
        raise InvalidTransition(
            f"task {task.key} is {task.status} but no unit is running it now (a worker "
            "that died: the sweep recovers it); try again in a moment"
        )
    for group in task_groups(task):
        broadcast(group, "tasks.changed", task_id=task.pk)
    return task


def stop_read(task_id: int) -> StopRequest | None:
    """The stop asked of the unit running ``task_id``, if any (one query)."""
    row = (
        TaskRuntime.objects.select_related("stop_actor_user")
        .filter(task_id=task_id)
        .exclude(stop_kind="")
        .first()
    )
    if row is None:
        return None
    kind = row.stop_actor_kind or ActorKind.SYSTEM
    actor = Actor(kind=kind, user=row.stop_actor_user, label=row.stop_actor_label)
    return StopRequest(kind=row.stop_kind, reason=row.stop_reason, actor=actor)


@dataclass
class StopWatch:
    """What the unit's threads share about a stop: the heartbeat thread ``poll``s the
    row; a Cancel sets ``cut``, which the model's streamed answer watches."""

    task_id: int
    cut: threading.Event = field(default_factory=threading.Event)
    request: StopRequest | None = None

    def poll(self) -> StopRequest | None:
        if self.request is None or self.request.kind != StopKind.CANCEL:
            found = stop_read(self.task_id)
            if found is not None:
                self.request = found
        if self.request is not None and self.request.kind == StopKind.CANCEL:
            self.cut.set()
        return self.request
