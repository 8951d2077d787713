"""Read-side queries of the tasks app: the task board, plan views, the /tasks line.

The board is built from a fixed number of queries whatever the task count: tasks
with their plan, schedule, runtime and last unit in one query, then dependencies,
workers and pending approvals; blockers are computed in Python from the graph.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db.models import Exists, OuterRef, Prefetch, QuerySet, Subquery
from django.utils import timezone

from agents_app.models import AgentSession, ModeTransition, Project, TransitionStatus
from tasks_app.lifecycle import recovery_actions
from tasks_app.merge_conflicts import Conflict, conflicts_by_task, merge_conflicts
from tasks_app.models import (
    ACTIVE_MERGE_STATUSES,
    FINISHED_PLAN_STATUSES,
    HoldReason,
    MergeRequest,
    Plan,
    PlanRequest,
    PlanStatus,
    ScheduleStatus,
    Task,
    TaskDependency,
    TaskSchedule,
    TaskStatus,
    Unit,
    UnitStatus,
    Worker,
)
from tasks_app.scheduler import Edge, blockers_of, claims_overlap, compute_waves, edges_by

ACTIVE_STATUSES = frozenset({"in_progress", "verifying", "retrying"})


@dataclass
class BoardRow:
    task: Task
    blockers: list[str]
    next_action: str
    worker: str
    heartbeat_age_s: float | None
    stale: bool
    overlaps: list[str] = field(default_factory=list)
    ready: bool = False  # runnable now: todo, unblocked, not claimed by a worker yet

    @property
    def actions(self) -> list[str]:
        """Recovery buttons for this row: retry, skip, cancel (tasks_app.engine.recovery)."""
        return recovery_actions(self.task.status)

    @property
    def retries(self) -> str:
        return f"{self.task.retry_count}/{self.task.max_retries}"

    @property
    def attempts(self) -> list[Unit]:
        """The task's units, oldest first (prefetched by ``board_tasks``)."""
        return list(getattr(self.task, "attempts", []))

    @property
    def last_unit(self) -> Unit | None:
        attempts = self.attempts
        return attempts[-1] if attempts else None

    @property
    def schedule_status(self) -> str:
        schedule = getattr(self.task, "schedule", None)
        return schedule.status if schedule is not None else "-"


@dataclass
class Board:
    rows: list[BoardRow]
    counts: dict[str, int]
    total_cost: Decimal
    total_budget: Decimal | None
    workers_online: int
    pending_approvals: int
    scheduled: int
    stuck: int
    warnings: list[str]
    statuses: list[str]
    # Branches waiting to merge that change the same files (tasks_app.merge_conflicts).
    merge_warnings: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "tasks": [row_json(row) for row in self.rows],
            "totals": {
                "counts": self.counts,
                "cost_spent": str(self.total_cost),
                "cost_budget": None if self.total_budget is None else str(self.total_budget),
                "workers_online": self.workers_online,
                "pending_approvals": self.pending_approvals,
                "scheduled_dispatches": self.scheduled,
                "stuck_units": self.stuck,
            },
            "warnings": self.warnings,
            "merge_warnings": self.merge_warnings,
        }


def board_tasks(
    *,
    session_id: int | None = None,
    statuses: list[str] | None = None,
    projects: QuerySet[Project] | None = None,
) -> QuerySet[Task]:
    """The board's tasks; ``projects`` limits them to those projects' sessions (what the
    person looking may view)."""
    last_unit = Unit.objects.filter(task=OuterRef("pk")).order_by("-attempt")
    tasks = (
        Task.objects.filter(plan__status__in=(PlanStatus.ACCEPTED, *FINISHED_PLAN_STATUSES))
        .select_related("plan__session__project", "schedule", "runtime")
        # Every attempt, for the board's links to the unit pages: one query for all rows.
        .prefetch_related(_attempts())
        .annotate(
            last_unit_status=Subquery(last_unit.values("status")[:1]),
            last_unit_attempt=Subquery(last_unit.values("attempt")[:1]),
            merge_queued=Exists(
                MergeRequest.objects.filter(task=OuterRef("pk"), status__in=ACTIVE_MERGE_STATUSES)
            ),
        )
        .order_by("plan_id", "position")
    )
    if session_id is not None:
        tasks = tasks.filter(plan__session_id=session_id)
    if projects is not None:
        tasks = tasks.filter(plan__session__project__in=projects)
    if statuses:
        tasks = tasks.filter(status__in=statuses)
    return tasks


def task_board(
    *,
    session_id: int | None = None,
    statuses: list[str] | None = None,
    projects: QuerySet[Project] | None = None,
) -> Board:
    tasks = list(
        board_tasks(session_id=session_id, projects=projects)
    )  # all, for blockers; filtered below
    statuses_by_id = {task.pk: task.status for task in tasks}
    keys_by_id = {task.pk: task.key for task in tasks}
    dependencies = list(
        TaskDependency.objects.filter(task__in=list(statuses_by_id)).values_list(
            "task_id", "depends_on_id", "condition"
        )
    )
    # The board spans plans, so the graph is keyed by primary key, not task key.
    edges = edges_by(Edge(str(task), str(on), condition) for task, on, condition in dependencies)
    named_statuses = {str(pk): status for pk, status in statuses_by_id.items()}
    now = timezone.now()
    stale_after = settings.SF_WORKER_STALE_AFTER.total_seconds()
    overlaps = _overlaps(tasks)
    merge_found = _merge_conflicts(tasks, dependencies)
    conflicts = conflicts_by_task(merge_found)
    rows = []
    for task in tasks:
        if statuses and task.status not in statuses:
            continue
        found = blockers_of(str(task.pk), edges, named_statuses)
        blockers = [b.describe(keys_by_id[int(b.on)]) for b in found]
        flagged = overlaps.get(task.key, []) + conflicts.get(task.pk, [])
        rows.append(_row(task, blockers, now, stale_after, flagged))
    return Board(
        rows=rows,
        counts=dict(Counter(task.status for task in tasks)),
        total_cost=sum((task.cost_spent for task in tasks), Decimal("0")),
        total_budget=_total_budget(tasks),
        workers_online=_workers_online(now),
        pending_approvals=_pending_approvals(session_id, projects),
        scheduled=sum(
            1 for task in tasks if _schedule(task) in (ScheduleStatus.DUE, ScheduleStatus.CLAIMED)
        ),
        stuck=sum(1 for row in rows if row.stale),
        warnings=[
            f"{a} and {b} both claim {', '.join(paths)}"
            for a, b, paths in claims_overlap(_open_claims(tasks))
        ],
        merge_warnings=[conflict.warning for conflict in merge_found],
        statuses=statuses or [],
    )


def _row(
    task: Task, blockers: list[str], now: datetime, stale_after: float, overlaps: list[str]
) -> BoardRow:
    runtime = getattr(task, "runtime", None)
    heartbeat = runtime.last_heartbeat_at if runtime is not None else None
    age = (now - heartbeat).total_seconds() if heartbeat else None
    running = (
        task.status in ACTIVE_STATUSES
        and getattr(task, "last_unit_status", None) == UnitStatus.RUNNING
    )
    return BoardRow(
        task=task,
        blockers=blockers,
        next_action=next_action(task, blockers),
        worker=runtime.worker if runtime is not None else "",
        heartbeat_age_s=round(age, 1) if age is not None else None,
        stale=running and (age is None or age > stale_after),
        overlaps=overlaps,
        ready=task.status == TaskStatus.TODO
        and not blockers
        and _schedule(task) != ScheduleStatus.CLAIMED,
    )


def next_action(task: Task, blockers: list[str]) -> str:
    schedule = _schedule(task)
    claimed_by = task.schedule.claimed_by if schedule else ""
    attempt = getattr(task, "last_unit_attempt", None)
    match task.status:
        case TaskStatus.TODO if blockers:
            return "waiting for " + "; ".join(blockers)
        case TaskStatus.TODO if schedule == ScheduleStatus.CLAIMED:
            return f"claimed by {claimed_by}"
        case TaskStatus.TODO if schedule == ScheduleStatus.DUE:
            return "ready: waiting for a worker"
        case TaskStatus.TODO:
            return "ready once dispatched"
        case TaskStatus.IN_PROGRESS:
            return f"unit {attempt or 1} running"
        case TaskStatus.VERIFYING:
            return "running verify commands"
        case TaskStatus.RETRYING:
            return f"retry {task.retry_count} of {task.max_retries}"
        case TaskStatus.REVIEW if getattr(task, "merge_queued", False):
            return "approved: in the merge queue (verified on the merged tree first)"
        case TaskStatus.REVIEW:
            return "awaiting review"
        case TaskStatus.BLOCKED if task.hold_reason == HoldReason.DEPENDENCY:
            return (
                "waiting on a dependency that ended the wrong way: "
                + ("; ".join(blockers) or task.status_reason)
                + " — retry or skip it, or cancel this task"
            )
        case TaskStatus.FAILED:
            return f"failed: {task.status_reason} — retry, skip or cancel"
        case TaskStatus.BLOCKED | TaskStatus.PAUSED:
            return (
                f"{task.status}: {task.status_reason}" if task.status_reason else str(task.status)
            )
    return "-"


def row_json(row: BoardRow) -> dict[str, Any]:
    task = row.task
    return {
        "id": task.pk,
        "key": task.key,
        "title": task.title,
        "plan": task.plan_id,
        "session": task.plan.session_id,
        "status": task.status,
        "schedule": row.schedule_status,
        "worker": row.worker or None,
        "heartbeat_age_s": row.heartbeat_age_s,
        "stale": row.stale,
        "blockers": row.blockers,
        "retries": {"count": task.retry_count, "max": task.max_retries},
        "cost": {
            "spent": str(task.cost_spent),
            "budget": None if task.cost_budget is None else str(task.cost_budget),
        },
        "checkpoint": task.checkpoint_ref or None,
        "next_action": row.next_action,
        "overlaps": row.overlaps,
    }


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
    tasks = Task.objects.order_by("position").prefetch_related(_attempts())
    plans = Plan.objects.filter(session_id=session_id).prefetch_related(
        Prefetch("tasks", queryset=tasks, to_attr="task_list")
    )
    return list(plans[:limit])


def session_plan_requests(session_id: int, *, limit: int = 5) -> list[PlanRequest]:
    """Intents still being planned, and those that failed without a plan (newest first;
    a planned one shows as its plan)."""
    requests = PlanRequest.objects.filter(session_id=session_id, plan__isnull=True)
    return list(requests.order_by("-created_at", "-pk")[:limit])


def _attempts() -> Prefetch:
    """A task's units, oldest first, as ``task.attempts`` (only what a link needs)."""
    units = Unit.objects.only("pk", "task_id", "attempt", "status").order_by("attempt")
    return Prefetch("units", queryset=units, to_attr="attempts")


def _schedule(task: Task) -> str | None:
    try:
        schedule: TaskSchedule = task.schedule
    except TaskSchedule.DoesNotExist:
        return None
    return schedule.status


def _open_claims(tasks: list[Task]) -> dict[str, list[str]]:
    return {
        task.key: list(task.intent_claim)
        for task in tasks
        if task.intent_claim
        and task.status not in (TaskStatus.DONE, TaskStatus.CANCELLED, TaskStatus.FAILED)
    }


def _overlaps(tasks: list[Task]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for first, second, paths in claims_overlap(_open_claims(tasks)):
        found.setdefault(first, []).append(f"{second}: {', '.join(paths)}")
        found.setdefault(second, []).append(f"{first}: {', '.join(paths)}")
    return found


def unit_merge(unit: Unit) -> MergeRequest | None:
    """The merge queue's last turn for ``unit``'s work (approved after it started)."""
    entries = MergeRequest.objects.filter(task_id=unit.task_id, created_at__gte=unit.started_at)
    return entries.order_by("-pk").first()


def _merge_conflicts(tasks: list[Task], dependencies: list[tuple[int, int, str]]) -> list[Conflict]:
    """Tasks waiting to merge whose branches change the same files (and Python symbols);
    a dependency of any condition orders two tasks, so those are not flagged."""
    depends_on: dict[int, list[int]] = {}
    for task_id, on, _ in dependencies:
        depends_on.setdefault(task_id, []).append(on)
    return merge_conflicts(tasks, depends_on)


def _total_budget(tasks: list[Task]) -> Decimal | None:
    budgets = [task.cost_budget for task in tasks if task.cost_budget is not None]
    return sum(budgets, Decimal("0")) if budgets else None


def _workers_online(now: datetime) -> int:
    cutoff = now - settings.SF_WORKER_STALE_AFTER
    return Worker.objects.filter(stopped_at__isnull=True, last_heartbeat_at__gte=cutoff).count()


def _pending_approvals(session_id: int | None, projects: QuerySet[Project] | None) -> int:
    pending = ModeTransition.objects.filter(status=TransitionStatus.PENDING, requires_approval=True)
    if session_id is not None:
        pending = pending.filter(session_id=session_id)
    if projects is not None:
        pending = pending.filter(session__project__in=projects)
    return pending.count()


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
