"""Notices: what a person should hear about, raised by the layer that knows it happened.

A lower layer (the gate, budgets, the engine) cannot call the notifications app above
it. It builds a ``Notice`` and calls ``notice_raise`` *inside* the transaction of the
state change; ``notify_app`` receives ``notice_raised`` synchronously and writes its
outbox row in that same transaction, so a change that rolls back leaves no
notification, and one that commits cannot lose its notification with a dying worker.

This is the one signal sent at once rather than on commit (``sf_core.signals``): the
point is to write in the sender's transaction. A receiver must only write rows; it
never does I/O (the delivery does, later, from the outbox).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from django.dispatch import Signal


class NoticeKind(StrEnum):
    """What happened. The values are stored (outbox rows, preferences): keep them."""

    APPROVAL_NEEDED = "approval_needed"  # a risk decision waits for a reviewer
    REVIEW_WAITING = "review_waiting"  # a task waits for a person's review
    TASK_BLOCKED = "task_blocked"  # a task is blocked (merge refused, question, …)
    TASK_FAILED = "task_failed"  # a task failed with its retries spent
    BUDGET_80 = "budget_80"  # a session spent 80 % of its budget
    BUDGET_100 = "budget_100"  # a session reached its budget and paused
    STUCK_LOOP = "stuck_loop"  # a unit repeated itself and was stopped
    SESSION_FINISHED = "session_finished"  # a session completed or failed
    TEST = "test"  # a person asked for a test notification

    @property
    def label(self) -> str:
        return LABELS[self]


LABELS: dict[NoticeKind, str] = {
    NoticeKind.APPROVAL_NEEDED: "Approval needed",
    NoticeKind.REVIEW_WAITING: "Review waiting",
    NoticeKind.TASK_BLOCKED: "Task blocked",
    NoticeKind.TASK_FAILED: "Task failed",
    NoticeKind.BUDGET_80: "Budget at 80 %",
    NoticeKind.BUDGET_100: "Budget reached",
    NoticeKind.STUCK_LOOP: "Stuck loop",
    NoticeKind.SESSION_FINISHED: "Session finished",
    NoticeKind.TEST: "Test notification",
}


@dataclass(frozen=True)
class Notice:
    """One event worth telling people about.

    ``dedupe_key`` names the state change itself (a transition row, a decision, a
    threshold of a session): the outbox keeps one row per key, so raising the same
    notice twice (a retried step, a second receiver) enqueues it once.
    """

    kind: NoticeKind
    dedupe_key: str
    project_id: int | None
    text: str
    session_id: int | None = None
    task_id: int | None = None
    unit_id: int | None = None
    url: str = ""
    payload: dict[str, Any] = field(default_factory=dict)


# Arguments: notice (Notice). Sent synchronously, inside the sender's transaction.
notice_raised = Signal()


def notice_raise(notice: Notice) -> None:
    """Tell whoever records notices (``notify_app``), in the caller's transaction."""
    notice_raised.send(sender=Notice, notice=notice)
