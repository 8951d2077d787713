"""The task board: one page of rows, and figures over every task the board spans.

A board of 1,000 tasks used to load all of them (with their plan, session, project,
schedule, runtime and every unit) and render every row: ~350 ms a render, ~1 MB of
HTML, redone for every open browser on every live update. Now the figures over all
tasks — counts by status, cost, budget, scheduled dispatches — are one aggregate
query; stuck units, overlapping claims and merge conflicts are read from the few
tasks they can concern (active, open with a claim, in review); and only the page's
rows (``BOARD_PAGE_SIZE``) are loaded whole, with the status of the tasks they depend
on for their blockers. The number of queries stays the same whatever the task count.
"""

from __future__ import annotations

import functools
from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.core.paginator import Page, Paginator
from django.db.models import Count, Exists, OuterRef, Prefetch, Q, QuerySet, Subquery, Sum
from django.utils import timezone
from django.utils.functional import cached_property

from agents_app.models import Project
from tasks_app.board_counts import pending_approvals, pending_mode_changes, workers_online
from tasks_app.lifecycle import ACTION_LABELS, recovery_actions
from tasks_app.merge_conflicts import (
    WAITING_TO_MERGE,
    Conflict,
    conflicts_by_task,
    merge_conflicts,
    ordered_pairs,
)
from tasks_app.models import (
    ACTIVE_MERGE_STATUSES,
    FINISHED_PLAN_STATUSES,
    HoldReason,
    MergeRequest,
    PlanStatus,
    ScheduleStatus,
    StopKind,
    Task,
    TaskDependency,
    TaskSchedule,
    TaskStatus,
    Unit,
    UnitStatus,
)
from tasks_app.scheduler import Edge, blockers_of, claims_overlap, edges_by
from tasks_app.waiting import queue_positions

ACTIVE_STATUSES = frozenset({"in_progress", "verifying", "retrying"})
# Rows on one page of the board: a screenful or two, and a render well under 50 ms.
BOARD_PAGE_SIZE = 50
CLOSED_STATUSES = (TaskStatus.DONE, TaskStatus.CANCELLED, TaskStatus.FAILED)
# A row never shows a task's spec (description, criteria, verify commands): not loaded.
ROW_UNUSED = ("description", "acceptance_criteria", "verify")
# What finding a task's branch needs (tasks_app.merge_conflicts.branch_changes).
BRANCH_FIELDS = (
    "key",
    "status",
    "plan_id",
    "branch_attempt",
    "plan__session__project__repo_path",
    "plan__session__project__base_branch",
    "plan__session__project__policy",  # record mode: the branches are the record's
)


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
    queue_position: int | None = None  # sent to the workers, none has taken it yet

    @property
    def actions(self) -> list[str]:
        """Recovery buttons for this row: retry, skip, cancel (tasks_app.engine.recovery)."""
        return recovery_actions(self.task.status)

    @property
    def stop_asked(self) -> str:
        """The stop asked of the running unit that is still to be honoured (``stop_shown``)."""
        return stop_shown(self.task)

    @property
    def buttons(self) -> list[tuple[str, str]]:
        """The recovery buttons as (action, words): Stop is "Stop after this step"."""
        asked = self.stop_asked
        shown = [
            action
            for action in self.actions
            if not (asked == "cancel" and action == "cancel") and not (asked and action == "stop")
        ]
        return [(action, ACTION_LABELS.get(action, action.capitalize())) for action in shown]

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


def stop_shown(task: Task) -> str:
    """A stop asked of the unit running ``task``, while still to come (the row outlives
    the task's move: a paused task said "stopping after this step")."""
    running = task.status in (TaskStatus.IN_PROGRESS, TaskStatus.VERIFYING)
    runtime = getattr(task, "runtime", None) if running else None  # read only if it counts
    asked = runtime.stop_kind if runtime is not None else ""
    return asked if asked == StopKind.CANCEL or task.status == TaskStatus.IN_PROGRESS else ""


@dataclass
class Board:
    rows: list[BoardRow]  # the page's rows (every row when no page was asked for)
    counts: dict[str, int]  # every task of the board, by status, whatever the filter
    total_cost: Decimal
    total_budget: Decimal | None
    workers_online: int
    pending_approvals: int  # tool calls waiting for a person: what the approvals page lists
    pending_mode_changes: int  # steering waiting for a person's approval (session page)
    scheduled: int
    stuck: int
    warnings: list[str]
    statuses: list[str]
    # Branches waiting to merge that change the same files (tasks_app.merge_conflicts).
    merge_warnings: list[str] = field(default_factory=list)
    total: int = 0  # tasks the status filter lets through, on every page
    page: Page[Task] | None = None  # None: every row is here

    def as_json(self) -> dict[str, Any]:
        return {
            "tasks": [row_json(row) for row in self.rows],
            "totals": {
                "counts": self.counts,
                "cost_spent": str(self.total_cost),
                "cost_budget": None if self.total_budget is None else str(self.total_budget),
                "workers_online": self.workers_online,
                "pending_approvals": self.pending_approvals,
                "pending_mode_changes": self.pending_mode_changes,
                "scheduled_dispatches": self.scheduled,
                "stuck_units": self.stuck,
            },
            "warnings": self.warnings,
            "merge_warnings": self.merge_warnings,
        }


def board_scope(
    *, session_id: int | None = None, projects: QuerySet[Project] | None = None
) -> QuerySet[Task]:
    """Every task the board spans: those of accepted (or finished) plans of one session,
    or of every session of ``projects`` (what the person looking may view; None: all)."""
    tasks = Task.objects.filter(plan__status__in=(PlanStatus.ACCEPTED, *FINISHED_PLAN_STATUSES))
    if session_id is not None:
        tasks = tasks.filter(plan__session_id=session_id)
    if projects is not None:
        tasks = tasks.filter(plan__session__project__in=projects)
    return tasks


def board_tasks(
    *,
    session_id: int | None = None,
    statuses: list[str] | None = None,
    projects: QuerySet[Project] | None = None,
) -> QuerySet[Task]:
    """The board's rows in board order, each with what its row shows."""
    last_unit = Unit.objects.filter(task=OuterRef("pk")).order_by("-attempt")
    tasks = (
        board_scope(session_id=session_id, projects=projects)
        .select_related("plan", "schedule", "runtime")
        .defer(*ROW_UNUSED)
        # Every attempt, for the board's links to the unit pages: one query for all rows.
        .prefetch_related(attempts_prefetch())
        .annotate(
            last_unit_status=Subquery(last_unit.values("status")[:1]),
            last_unit_attempt=Subquery(last_unit.values("attempt")[:1]),
            merge_queued=Exists(
                MergeRequest.objects.filter(task=OuterRef("pk"), status__in=ACTIVE_MERGE_STATUSES)
            ),
        )
        .order_by("plan_id", "position")
    )
    if statuses:
        tasks = tasks.filter(status__in=statuses)
    return tasks


def task_board(
    *,
    session_id: int | None = None,
    statuses: list[str] | None = None,
    projects: QuerySet[Project] | None = None,
    page: int | str | None = None,
    page_size: int = BOARD_PAGE_SIZE,
    only: Collection[int] | None = None,
) -> Board:
    """The board; with ``page``, only that page's rows (a page past the end is the
    last, anything else that is not a number the first); with ``only``, the rows of
    those tasks alone (a live update's changed rows). Counts, cost and warnings always
    cover every task."""
    statuses = statuses or []
    scope = board_scope(session_id=session_id, projects=projects)
    totals = _totals(scope)
    counts = {
        status: totals[f"n_{status}"] for status in TaskStatus.values if totals[f"n_{status}"]
    }
    total = sum(counts.get(status, 0) for status in statuses) if statuses else sum(counts.values())
    rows_query = board_tasks(session_id=session_id, statuses=statuses, projects=projects)
    shown: Page[Task] | None = None
    if only is not None:
        tasks = list(rows_query.filter(pk__in=only))
    elif page is None:
        tasks = list(rows_query)
    else:
        shown = _Pages(rows_query, page_size, count=total).get_page(page)
        tasks = list(shown.object_list)
    now = timezone.now()
    # Two tasks in review are needed for a conflict; the counts say whether there are.
    waiting = sum(counts.get(status, 0) for status in WAITING_TO_MERGE)
    merge_found = _merge_conflicts(scope) if waiting >= 2 else []
    claims = _open_claims(scope)
    rows = _rows(tasks, now, _overlaps(claims), conflicts_by_task(merge_found))
    return Board(
        rows=rows,
        counts=counts,
        total_cost=totals["cost"] if totals["cost"] is not None else Decimal("0"),
        total_budget=totals["budget"],
        workers_online=workers_online(now),
        pending_approvals=pending_approvals(session_id, projects),
        pending_mode_changes=pending_mode_changes(session_id, projects),
        scheduled=totals["scheduled"],
        stuck=_stuck(scope, statuses, now) if counts.keys() & ACTIVE_STATUSES else 0,
        warnings=[
            f"{a} and {b} both claim {', '.join(paths)}" for a, b, paths in claims_overlap(claims)
        ],
        merge_warnings=[conflict.warning for conflict in merge_found],
        statuses=statuses,
        total=total,
        page=shown,
    )


class _Pages(Paginator):
    """A paginator told its count: the totals query already has it."""

    def __init__(self, tasks: QuerySet[Task], per_page: int, *, count: int) -> None:
        super().__init__(tasks, per_page)
        self.known_count = count

    @cached_property
    def count(self) -> int:
        return self.known_count


def _totals(scope: QuerySet[Task]) -> dict[str, Any]:
    """Counts by status, cost, budget and scheduled dispatches: one aggregate query."""
    by_status = {
        f"n_{status}": Count("pk", filter=Q(status=status)) for status in TaskStatus.values
    }
    return scope.aggregate(
        cost=Sum("cost_spent"),
        budget=Sum("cost_budget"),  # None when no task has a budget
        scheduled=Count(
            "pk", filter=Q(schedule__status__in=(ScheduleStatus.DUE, ScheduleStatus.CLAIMED))
        ),
        **by_status,
    )


def _rows(
    tasks: list[Task],
    now: datetime,
    overlaps: dict[str, list[str]],
    conflicts: dict[int, list[str]],
) -> list[BoardRow]:
    """The rows of ``tasks``, their blockers read from the tasks they depend on."""
    dependencies = TaskDependency.objects.filter(task__in=[task.pk for task in tasks])
    found = dependencies.values_list(
        "task_id", "depends_on_id", "condition", "depends_on__status", "depends_on__key"
    )
    statuses: dict[str, str] = {}
    keys: dict[int, str] = {}
    edges: list[Edge] = []
    for task_id, on, condition, status, key in found:
        statuses[str(on)], keys[on] = status, key
        edges.append(Edge(str(task_id), str(on), condition))
    # The board spans plans, so the graph is keyed by primary key, not task key.
    grouped = edges_by(edges)
    stale_after = settings.SF_WORKER_STALE_AFTER.total_seconds()
    rows = []
    sent = [task.pk for task in tasks if _waits_for_worker(task)]
    positions = queue_positions(sent)
    for task in tasks:
        blocked = blockers_of(str(task.pk), grouped, statuses)
        blockers = [b.describe(keys[int(b.on)]) for b in blocked]
        flagged = overlaps.get(task.key, []) + conflicts.get(task.pk, [])
        rows.append(_row(task, blockers, now, stale_after, flagged))
        rows[-1].queue_position = positions.get(task.pk)
    return rows


def _row(
    task: Task, blockers: list[str], now: datetime, stale_after: float, overlaps: list[str]
) -> BoardRow:
    runtime = getattr(task, "runtime", None)
    heartbeat = runtime.last_heartbeat_at if runtime is not None else None
    age = (now - heartbeat).total_seconds() if heartbeat else None
    return BoardRow(
        task=task,
        blockers=blockers,
        next_action=next_action(task, blockers),
        worker=runtime.worker if runtime is not None else "",
        heartbeat_age_s=round(age, 1) if age is not None else None,
        stale=_is_stale(task, age, stale_after),
        overlaps=overlaps,
        ready=task.status == TaskStatus.TODO
        and not blockers
        and _schedule(task) != ScheduleStatus.CLAIMED,
    )


def _waits_for_worker(task: Task) -> bool:
    schedule = getattr(task, "schedule", None)
    if schedule is None or schedule.enqueued_at is None:
        return False
    return schedule.status in (ScheduleStatus.DUE, ScheduleStatus.CLAIMED)


def _is_stale(task: Task, heartbeat_age: float | None, stale_after: float) -> bool:
    """A unit running whose worker stopped beating (or never did)."""
    running = (
        task.status in ACTIVE_STATUSES
        and getattr(task, "last_unit_status", None) == UnitStatus.RUNNING
    )
    return running and (heartbeat_age is None or heartbeat_age > stale_after)


def _stuck(scope: QuerySet[Task], statuses: list[str], now: datetime) -> int:
    """Stale units among the tasks the filter lets through, on every page: only active
    tasks can be stuck, so only those are read."""
    active = [status for status in ACTIVE_STATUSES if not statuses or status in statuses]
    last_unit = Unit.objects.filter(task=OuterRef("pk")).order_by("-attempt")
    tasks = (
        scope.filter(status__in=active)
        .select_related("runtime")
        .annotate(last_unit_status=Subquery(last_unit.values("status")[:1]))
    )
    stale_after = settings.SF_WORKER_STALE_AFTER.total_seconds()
    stuck = 0
    for task in tasks:
        runtime = getattr(task, "runtime", None)
        heartbeat = runtime.last_heartbeat_at if runtime is not None else None
        age = (now - heartbeat).total_seconds() if heartbeat else None
        stuck += _is_stale(task, age, stale_after)
    return stuck


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


def attempts_prefetch() -> Prefetch:
    """A task's units, oldest first, as ``task.attempts`` (only what a link needs)."""
    units = Unit.objects.only("pk", "task_id", "attempt", "status").order_by("attempt")
    return Prefetch("units", queryset=units, to_attr="attempts")


def _schedule(task: Task) -> str | None:
    try:
        schedule: TaskSchedule = task.schedule
    except TaskSchedule.DoesNotExist:
        return None
    return schedule.status


def _open_claims(scope: QuerySet[Task]) -> dict[str, list[str]]:
    """Files claimed by tasks still open: only tasks with a claim are read."""
    claimed = scope.exclude(status__in=CLOSED_STATUSES).exclude(intent_claim=[])
    return {key: list(claim) for key, claim in claimed.values_list("key", "intent_claim") if claim}


def _overlaps(claims: dict[str, list[str]]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for first, second, paths in claims_overlap(claims):
        found.setdefault(first, []).append(f"{second}: {', '.join(paths)}")
        found.setdefault(second, []).append(f"{first}: {', '.join(paths)}")
    return found


def _merge_conflicts(scope: QuerySet[Task]) -> list[Conflict]:
    """Tasks waiting to merge whose branches change the same files (and Python symbols);
    a dependency of any condition orders two tasks, so those are not flagged. Only the
    tasks in review are read, and the graph only when two of them could conflict."""
    waiting = list(
        scope.filter(status__in=WAITING_TO_MERGE)
        .select_related("plan__session__project")
        .only(*BRANCH_FIELDS)
    )
    if len(waiting) < 2:
        return []
    return merge_conflicts(waiting, _ordered_among(frozenset(task.pk for task in waiting)))


@functools.lru_cache(maxsize=256)
def _ordered_among(tasks: frozenset[int]) -> frozenset[tuple[int, int]]:
    """The pairs of ``tasks`` their plans' dependencies order. A plan's dependencies
    are written with it and never change (``plan_create``), and never cross plans, so
    the answer for a set of tasks is read once per process, not on every render."""
    plans = Task.objects.filter(pk__in=tasks).values("plan_id")
    edges = TaskDependency.objects.filter(task__plan__in=plans)
    depends_on: dict[int, list[int]] = {}
    for task_id, on in edges.values_list("task_id", "depends_on_id"):
        depends_on.setdefault(task_id, []).append(on)
    return frozenset(ordered_pairs(depends_on, among=tasks))
