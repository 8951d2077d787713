"""What a task or unit is waiting for, said on the board and the unit page.

- A worker: a task sent to the workers (``TaskSchedule.enqueued_at``) that no worker has
  taken yet waits in the units queue; its position is its place among all such tasks,
  oldest sent first (the queue is first in, first out; resumed work, sent with a higher
  priority, may pass it).
- The model: while a unit's request is unanswered (a local model reads a long prompt for
  minutes), the unit page says when it was sent and how many tokens it holds
  (``TaskRuntime.model_request_at`` and ``model_request_tokens``, set by the unit; the
  page counts the seconds itself), until the answer starts to arrive.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from django.db.models import Q
from django.utils import timezone

from sf_core.live import Groups, broadcast
from tasks_app.models import ScheduleStatus, TaskRuntime, TaskSchedule

WAITING_FOR_WORKER = Q(
    status__in=(ScheduleStatus.DUE, ScheduleStatus.CLAIMED), enqueued_at__isnull=False
)


def queue_positions(task_ids: Iterable[int]) -> dict[int, int]:
    """The place in the units queue (1: next) of each of ``task_ids`` waiting for a
    worker; tasks not waiting are left out. One query, none when ``task_ids`` is empty."""
    wanted = set(task_ids)
    if not wanted:
        return {}
    order = TaskSchedule.objects.filter(WAITING_FOR_WORKER).order_by("enqueued_at", "task_id")
    return {
        task_id: place
        for place, task_id in enumerate(order.values_list("task_id", flat=True), start=1)
        if task_id in wanted
    }


def waiting_context(sent: datetime, tokens: int | None) -> dict[str, object]:
    """The unit page's "waiting for the model" box for a request sent at ``sent``: its
    age in whole seconds (shown) and in milliseconds (the page counts on from it, so a
    box rendered 0.9 s into a second does not start a second behind)."""
    age_ms = max(0, int((timezone.now() - sent).total_seconds() * 1000))
    return {"waiting_age": age_ms // 1000, "waiting_age_ms": age_ms, "waiting_tokens": tokens}


def model_request_sent(*, task_id: int, unit_id: int, tokens: int) -> None:
    """A unit's model request is on its way: the unit page says so, and for how long."""
    sent = timezone.now()
    TaskRuntime.objects.filter(task_id=task_id).update(
        model_request_at=sent, model_request_tokens=tokens
    )
    broadcast(Groups.unit(unit_id), "unit.waiting", sent_at=sent.isoformat(), tokens=tokens)


def model_request_answered(*, task_id: int, unit_id: int) -> None:
    """The answer started (or the request ended): no longer waiting for the model."""
    TaskRuntime.objects.filter(task_id=task_id).exclude(model_request_at=None).update(
        model_request_at=None, model_request_tokens=None
    )
    broadcast(Groups.unit(unit_id), "unit.waiting", sent_at="", tokens=0)
