"""Read-side queries of the tasks app: plan views, the /tasks line, the session's plans.

The task board itself is in ``tasks_app.board`` (its names are re-exported here).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db.models import Exists, Prefetch, Q, Sum
from django.utils import timezone

from agents_app.models import AgentSession, ModelCall
from tasks_app.board import (
    CLOSED_STATUSES,
    Board,
    BoardRow,
    attempts_prefetch,
    board_tasks,
    next_action,
    row_json,
    stop_shown,
    task_board,
)
from tasks_app.merge_conflicts import WAITING_TO_MERGE
from tasks_app.models import (
    AttemptRound,
    MergeRequest,
    Plan,
    PlanRequest,
    PlanStatus,
    Task,
    TaskDependency,
    TaskSchedule,
    TaskStatus,
    TaskTransition,
    Unit,
    UnitStatus,
    Worker,
)
from tasks_app.scheduler import Edge, compute_waves
from tasks_app.waiting import WAITING_FOR_WORKER, planning_waits

__all__ = [
    "Board",
    "BoardRow",
    "board_tasks",
    "next_action",
    "row_json",
    "stop_shown",
    "task_board",
]


def rows_touched(task_id: int, shown: frozenset[int]) -> list[int]:
    """The rows among ``shown`` (a board page's tasks) that a change to task ``task_id``
    can change, the task first: besides its own, its dependents' blockers; with a
    claim, the overlap flags of the open tasks with a claim; the merge-conflict flags of
    the tasks waiting to merge; and the queue positions of the tasks waiting for a
    worker (one taken or sent moves the others). One query."""
    changed_claims = Exists(Task.objects.filter(pk=task_id).exclude(intent_claim=[]))
    neighbours = (
        Q(pk__in=TaskDependency.objects.filter(depends_on_id=task_id).values("task_id"))
        | Q(status__in=WAITING_TO_MERGE)
        | Q(pk__in=TaskSchedule.objects.filter(WAITING_FOR_WORKER).values("task_id"))
        | (Q(changed_claims) & ~Q(intent_claim=[]) & ~Q(status__in=CLOSED_STATUSES))
    )
    found = Task.objects.filter(pk__in=shown - {task_id}).filter(neighbours)
    return [task_id, *sorted(found.values_list("pk", flat=True))]


def plan_waves(plan: Plan) -> list[list[Task]]:
    tasks = list(plan.tasks.order_by("position"))
    by_key = {task.key: task for task in tasks}
    rows = TaskDependency.objects.filter(task__plan=plan).values_list(
        "task__key", "depends_on__key", "condition"
    )
    waves = compute_waves([task.key for task in tasks], [Edge(t, o, c) for t, o, c in rows])
    return [[by_key[key] for key in wave] for wave in waves]


def task_summary_line(session: AgentSession) -> str:
    """One line for the /tasks command."""
    board = task_board(session_id=session.pk)
    if not board.rows:
        open_plans = Plan.objects.filter(session=session, status=PlanStatus.PROPOSED).count()
        return "no accepted plan" + (
            f" ({open_plans} proposed, awaiting acceptance)" if open_plans else ""
        )
    counts = ", ".join(f"{count} {status}" for status, count in sorted(board.counts.items()))
    ready = sum(1 for row in board.rows if row.ready)
    return f"{len(board.rows)} tasks: {counts} · {ready} ready · ${board.total_cost} spent"


def session_report_fields(sender: object, *, session: AgentSession, **_: Any) -> dict[str, Any]:
    """The ``session_report_requested`` receiver: the tasks' line in the session report."""
    return {"tasks_summary": task_summary_line(session)}


def session_plans(session_id: int, *, limit: int = 20) -> list[Plan]:
    """The session page's plan list, newest first, each with its tasks (``task_list``)
    and each task's units (``attempts``) for the links to the unit pages."""
    tasks = Task.objects.order_by("position").prefetch_related(attempts_prefetch())
    plans = Plan.objects.filter(session_id=session_id).prefetch_related(
        Prefetch("tasks", queryset=tasks, to_attr="task_list")
    )
    return list(plans[:limit])


def session_plan_requests(session_id: int, *, limit: int = 5) -> list[PlanRequest]:
    """Intents still being planned, and those that failed without a plan (newest first;
    a planned one shows as its plan); each planning one with what it waits for
    (``waiting.planning_waits``: a worker, and its place, or the model)."""
    requests = PlanRequest.objects.filter(session_id=session_id, plan__isnull=True)
    return planning_waits(list(requests.order_by("-created_at", "-pk")[:limit]))


def unit_merge(unit: Unit) -> MergeRequest | None:
    """The merge queue's last turn for ``unit``'s work (approved after it started)."""
    entries = MergeRequest.objects.filter(task_id=unit.task_id, created_at__gte=unit.started_at)
    return entries.order_by("-pk").first()


@dataclass(frozen=True)
class UnitSpend:
    tokens_in: int
    tokens_out: int
    cost: Decimal


def unit_spend(unit: Unit) -> UnitSpend:
    """What ``unit`` has spent so far: its own figures once it has ended, and the cost
    ledger's (``ModelCall``, one row per model call, written as each call returns) while
    it runs — the unit's fields are only written when its loop ends."""
    if unit.status != UnitStatus.RUNNING:
        return UnitSpend(unit.tokens_in, unit.tokens_out, unit.cost)
    calls = ModelCall.objects.filter(unit=unit).aggregate(
        cost=Sum("cost"), tokens_in=Sum("tokens_in"), tokens_out=Sum("tokens_out")
    )
    return UnitSpend(
        max(unit.tokens_in, calls["tokens_in"] or 0),
        max(unit.tokens_out, calls["tokens_out"] or 0),
        max(unit.cost, calls["cost"] or Decimal(0)),
    )


def unit_end_reason(unit: Unit, latest: Unit | None) -> str:
    """Why ``unit`` stands where it does, in the task's words: the task's reason while
    ``unit`` is its latest attempt; for an earlier one, the last move of the task before
    the next attempt started (e.g. "verification failed (retry 1 of 3)"), not what the
    task says now about a later attempt. (The next attempt's own start, a move into
    in_progress just before its unit row, is not this one's end.)"""
    if latest is None or latest.pk == unit.pk:
        return unit.task.status_reason
    moves = TaskTransition.objects.filter(
        task_id=unit.task_id, created_at__gte=unit.started_at
    ).exclude(to_status=TaskStatus.IN_PROGRESS)
    following = Unit.objects.filter(task_id=unit.task_id, attempt__gt=unit.attempt)
    if (after := following.order_by("attempt").first()) is not None:
        moves = moves.filter(created_at__lt=after.started_at)
    move = moves.order_by("-created_at", "-pk").first()
    return move.reason if move is not None else ""


def changes_requested_before(unit: Unit, previous: Unit | None) -> str:
    """What the reviewer of ``previous``, the attempt before ``unit``, asked for when
    they sent it back ("changes requested by ada: …"), or "" when that attempt was not
    sent back (or there is none)."""
    if previous is None:
        return ""
    sent_back = TaskTransition.objects.filter(
        task_id=unit.task_id,
        from_status=TaskStatus.REVIEW,
        to_status=TaskStatus.TODO,
        created_at__gte=previous.started_at,
        created_at__lte=unit.started_at,
    )
    move = sent_back.order_by("-created_at", "-pk").first()
    return move.reason if move is not None else ""


@dataclass(frozen=True)
class WorkerStatus:
    hostname: str
    pid: int
    concurrency: int
    queues: str
    online: bool
    started_at: datetime
    last_heartbeat_at: datetime
    heartbeat_age_s: float
    live_sent: int = 0
    live_dropped: int = 0  # live updates its full sender dropped (counted, never raised)
    live_failed: int = 0  # live updates the channel layer refused


def worker_statuses() -> list[WorkerStatus]:
    """The registered workers, running ones first, with whether each is online now."""
    now = timezone.now()
    stale_after = settings.SF_WORKER_STALE_AFTER
    return [
        WorkerStatus(
            hostname=worker.hostname,
            pid=worker.pid,
            concurrency=worker.concurrency,
            queues=worker.queues,
            online=worker.is_online(stale_after=stale_after, now=now),
            started_at=worker.started_at,
            last_heartbeat_at=worker.last_heartbeat_at,
            heartbeat_age_s=round((now - worker.last_heartbeat_at).total_seconds(), 1),
            live_sent=worker.live_sent,
            live_dropped=worker.live_dropped,
            live_failed=worker.live_failed,
        )
        for worker in Worker.objects.order_by("stopped_at", "-last_heartbeat_at")[:20]
    ]


def current_unit(units: list[Unit]) -> Unit | None:
    """Of a task's ``units`` (by attempt), the one whose work the task carries: the
    latest, or, when the latest is one attempt of a best-of-N round, the round's chosen
    attempt (docs/best-of-n.md)."""
    if not units:
        return None
    latest = units[-1]
    if latest.round_id is None:
        return latest
    winner = AttemptRound.objects.filter(pk=latest.round_id).values_list("winner_id", flat=True)
    chosen = winner.first()
    return next((unit for unit in units if unit.pk == chosen), latest)
