"""Delivering people's follow-up messages to a task's agent (docs/follow-ups.md).

A running unit takes the task's waiting messages before each model step
(``followups_take``, through ``EngineHooks.notes``); a new unit takes them into its
brief (``followups_brief``). Taking is a conditional update per message
(``delivered_at`` still empty), so two units can never both take one. Each message
taken is recorded in the unit's trace as the person's (who, when, the words).
"""

from __future__ import annotations

from datetime import UTC

from django.db.models import QuerySet
from django.utils import timezone

from agents_app.models import TraceKind
from agents_app.runtime.trace import TraceRecorder
from tasks_app.models import FollowUp

TRACE_NAME = "followup"


def followup_words(followup: FollowUp) -> str:
    """How the model is shown a message: who sent it, when, and the words."""
    when = followup.created_at.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
    return f"A message from {followup.author_label} ({when}):\n{followup.text}"


def followups_waiting(task_id: int) -> QuerySet[FollowUp]:
    return FollowUp.objects.filter(task_id=task_id, delivered_at__isnull=True).order_by(
        "created_at", "pk"
    )


def followups_take(*, task_id: int, unit_id: int, recorder: TraceRecorder | None) -> list[str]:
    """The task's waiting messages, now delivered to ``unit_id`` (traced), as the model
    is to read them; [] when none waits (one indexed query)."""
    taken = []
    for followup in followups_waiting(task_id):
        now = timezone.now()
        claimed = FollowUp.objects.filter(pk=followup.pk, delivered_at__isnull=True).update(
            delivered_at=now, delivered_unit_id=unit_id
        )
        if claimed != 1:
            continue  # another unit took it first
        followup.delivered_at, followup.delivered_unit_id = now, unit_id
        if recorder is not None:
            recorder.record(
                TraceKind.NOTE,
                name=TRACE_NAME,
                payload={
                    "author": followup.author_label,
                    "sent_at": followup.created_at.isoformat(),
                    "text": followup.text,
                    "followup": followup.pk,
                },
                started_at=now,
            )
        taken.append(followup_words(followup))
    return taken


def followups_brief(*, task_id: int, unit_id: int, recorder: TraceRecorder | None) -> str:
    """The brief's section of the messages people sent since the last attempt."""
    taken = followups_take(task_id=task_id, unit_id=unit_id, recorder=recorder)
    if not taken:
        return ""
    return (
        "## Follow-up messages from people (since the last attempt)\n"
        + "\n\n".join(taken)
        + "\n\nDo what they ask as part of this task; every acceptance criterion still holds."
    )
