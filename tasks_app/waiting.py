"""What a task or unit is waiting for, said on the board and the unit page.

- A worker: a task sent to the workers (``TaskSchedule.enqueued_at``) that no worker has
  taken yet waits in the units queue; its position is its place among all such tasks,
  oldest sent first (the queue is first in, first out; resumed work, sent with a higher
  priority, may pass it).
- The model: while a unit's request is unanswered (a local model reads a long prompt for
  minutes), the unit page says when it was sent and how many tokens it holds
  (``TaskRuntime.model_request_at`` and ``model_request_tokens``, set by the unit; the
  page counts the seconds itself), until the answer starts to arrive.
- Planning waits for both too, said on the session page where the intent is listed: a
  plan request no worker has claimed yet (``PlanRequest.started_at``) is at a place among
  the requests waiting, oldest first; a claimed one whose planner's request is
  unanswered says so (``PlanRequest.model_request_at``/``_tokens``). The same box
  (``tasks_app/_model_waiting.html``) and the same counting script (``sf/waiting.js``)
  serve both pages.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

from django.db.models import Q
from django.utils import timezone

from agents_app.runtime.context import token_count
from sf_core.live import Groups, broadcast
from tasks_app.models import (
    PlanRequest,
    PlanRequestStatus,
    ScheduleStatus,
    TaskRuntime,
    TaskSchedule,
)

WAITING_FOR_WORKER = Q(
    status__in=(ScheduleStatus.DUE, ScheduleStatus.CLAIMED), enqueued_at__isnull=False
)
PLANNING_WAITING_FOR_WORKER = Q(status=PlanRequestStatus.PLANNING, started_at__isnull=True)


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


def prompt_tokens(request: dict[str, Any]) -> int:
    """A model request's prompt in tokens, as litellm counts them (0 if it cannot)."""
    try:
        return token_count(request["model"], request["messages"], request.get("tools") or [])
    except Exception:  # a count is for people to read; never a reason to fail a step
        return 0


# --- planning -------------------------------------------------------------------------


def planning_positions() -> dict[int, int]:
    """The place (1: next) of every plan request no worker has claimed yet, oldest
    first, by its id. One query."""
    order = PlanRequest.objects.filter(PLANNING_WAITING_FOR_WORKER).order_by("created_at", "pk")
    return {pk: place for place, pk in enumerate(order.values_list("pk", flat=True), start=1)}


def planning_waits(requests: list[PlanRequest]) -> list[PlanRequest]:
    """``requests`` (a session page's) with what each one planning waits for:
    ``queue_position`` (no worker has it yet) and ``waiting`` (its model request
    unanswered: ``waiting_context``), None where it does not wait for that."""
    planning = [r for r in requests if r.status == PlanRequestStatus.PLANNING]
    positions = planning_positions() if any(r.started_at is None for r in planning) else {}
    for request in requests:
        request.queue_position = positions.get(request.pk)  # type: ignore[attr-defined]
        sent = request.model_request_at if request.status == PlanRequestStatus.PLANNING else None
        request.waiting = (  # type: ignore[attr-defined]
            waiting_context(sent, request.model_request_tokens) if sent else None
        )
    return requests


def planning_claimed(request: PlanRequest) -> None:
    """A worker took ``request``: its session page says so, and every session with a
    request still waiting shows it one place nearer (their positions moved)."""
    waiting = PlanRequest.objects.filter(PLANNING_WAITING_FOR_WORKER)
    sessions = {request.session_id, *waiting.values_list("session_id", flat=True)}
    for session_id in sorted(sessions):
        broadcast(Groups.session(session_id), "session.changed")


def planning_completion(request: PlanRequest, completion: Callable[..., Any]) -> Callable[..., Any]:
    """``completion`` for the planner of ``request``: while each call is unanswered the
    session page says the model is being waited for, since when, with how many tokens."""

    def waited(**kwargs: Any) -> Any:
        _planning_wait(request, timezone.now(), prompt_tokens(kwargs))
        try:
            return completion(**kwargs)
        finally:
            _planning_wait(request, None, None)

    return waited


def _planning_wait(request: PlanRequest, sent: datetime | None, tokens: int | None) -> None:
    PlanRequest.objects.filter(pk=request.pk).update(
        model_request_at=sent, model_request_tokens=tokens
    )
    broadcast(Groups.session(request.session_id), "session.changed")
