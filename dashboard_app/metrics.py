"""Outcome metrics: what sessions delivered, per project and over time.

The figures, for a window of time (and per day or week within it):

- **merged / failed / cancelled**: tasks whose *current* status is done (merged),
  failed or cancelled, counted when they last reached it;
- **accept → merge**: from the plan's acceptance to the task's merge, median and p90
  (nearest rank: the smallest duration with at least 90 % of them at or below it);
- **$ per merged task**: everything the window's model calls cost (planning, failed
  and cancelled units included: the cost ledger) over the tasks merged in it;
- **first-attempt pass rate**: of the first units that finished, those whose
  verification passed;
- **approvals per task**: risk decisions a person reviewed (approved or rejected)
  over the tasks that ran a unit.

Loading (``metric_facts``) is a few queries; everything else is pure functions over
the facts, so a test can compute the same figures by hand.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Any

from django.db.models import F, QuerySet
from django.utils import timezone

from agents_app.models import ModelCall, Project, ReviewStatus, RiskDecision
from tasks_app.models import Task, TaskStatus, TaskTransition, Unit

FINAL = (TaskStatus.DONE, TaskStatus.FAILED, TaskStatus.CANCELLED)
BUCKETS = ("day", "week")


@dataclass(frozen=True)
class Ended:
    """A task that ended: its project, final status, when, and when its plan was accepted."""

    project: str
    status: str
    at: datetime
    accepted_at: datetime | None


@dataclass(frozen=True)
class Stamp:
    """Something counted at a time: a call's cost, a first unit's pass, a review, a task run."""

    project: str
    at: datetime
    value: Any = None


@dataclass
class Facts:
    ended: list[Ended] = field(default_factory=list)
    costs: list[Stamp] = field(default_factory=list)  # value: Decimal
    first_units: list[Stamp] = field(default_factory=list)  # value: passed (bool)
    reviews: list[Stamp] = field(default_factory=list)
    tasks_run: list[Stamp] = field(default_factory=list)  # value: task id

    def only(self, keep: Callable[[str, datetime], bool]) -> Facts:
        """The facts ``keep`` accepts (by project and time)."""

        def pick(items: Iterable[Any]) -> list[Any]:
            return [item for item in items if keep(item.project, item.at)]

        return Facts(
            pick(self.ended),
            pick(self.costs),
            pick(self.first_units),
            pick(self.reviews),
            pick(self.tasks_run),
        )

    def grouped(self, key: Callable[[str, datetime], date]) -> dict[date, Facts]:
        """The facts split by ``key`` (a period), in one pass."""
        groups: dict[date, Facts] = {}
        for name in ("ended", "costs", "first_units", "reviews", "tasks_run"):
            for item in getattr(self, name):
                group = groups.setdefault(key(item.project, item.at), Facts())
                getattr(group, name).append(item)
        return groups


@dataclass(frozen=True)
class Figures:
    merged: int
    failed: int
    cancelled: int
    accept_to_merge_median_s: float | None
    accept_to_merge_p90_s: float | None
    cost_usd: Decimal
    cost_per_merged_usd: Decimal | None
    first_attempts: int
    first_attempt_passes: int
    first_attempt_pass_rate: float | None
    approvals: int
    tasks_run: int
    approvals_per_task: float | None

    def as_json(self) -> dict[str, Any]:
        data = asdict(self)
        for key in ("cost_usd", "cost_per_merged_usd"):
            data[key] = None if data[key] is None else str(data[key])
        return data


def p90(values: list[float]) -> float | None:
    """Nearest rank: the smallest value with at least 90 % of them at or below it."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[math.ceil(0.9 * len(ordered)) - 1]


def figures(facts: Facts) -> Figures:
    """The figures of a set of facts (one project, one period, or all of them)."""
    count = {status: sum(1 for e in facts.ended if e.status == status) for status in FINAL}
    waits = [
        (e.at - e.accepted_at).total_seconds()
        for e in facts.ended
        if e.status == TaskStatus.DONE and e.accepted_at is not None
    ]
    merged = count[TaskStatus.DONE]
    cost = sum((Decimal(s.value) for s in facts.costs), Decimal(0))
    passes = sum(1 for s in facts.first_units if s.value)
    tried = len(facts.first_units)
    ran = len({s.value for s in facts.tasks_run})
    return Figures(
        merged=merged,
        failed=count[TaskStatus.FAILED],
        cancelled=count[TaskStatus.CANCELLED],
        accept_to_merge_median_s=statistics.median(waits) if waits else None,
        accept_to_merge_p90_s=p90(waits),
        cost_usd=cost,
        cost_per_merged_usd=(cost / merged).quantize(Decimal("0.000001")) if merged else None,
        first_attempts=tried,
        first_attempt_passes=passes,
        first_attempt_pass_rate=passes / tried if tried else None,
        approvals=len(facts.reviews),
        tasks_run=ran,
        approvals_per_task=len(facts.reviews) / ran if ran else None,
    )


def period_of(moment: datetime, by: str) -> date:
    """The day (or the Monday of the week) a moment falls in, in the current time zone."""
    day = timezone.localtime(moment).date()
    return day - timedelta(days=day.weekday()) if by == "week" else day


Keep = Callable[[str, datetime], bool]


def of_project(name: str) -> Keep:
    return lambda project, _at: project == name


def series(facts: Facts, by: str, since: date, until: date) -> list[tuple[date, Figures]]:
    """The figures of each day or week from ``since`` to ``until``, empty ones included."""
    periods: list[date] = []
    current = since - timedelta(days=since.weekday()) if by == "week" else since
    step = timedelta(days=7 if by == "week" else 1)
    while current <= until:
        periods.append(current)
        current += step
    grouped = facts.grouped(lambda _project, at: period_of(at, by))
    return [(p, figures(grouped.get(p, Facts()))) for p in periods]


def metric_facts(projects: QuerySet[Project], since: datetime, until: datetime) -> Facts:
    """What happened in the projects between ``since`` and ``until`` (few queries)."""
    window = {"created_at__gte": since, "created_at__lt": until}
    return Facts(
        ended=_ended(projects, since, until),
        costs=[
            Stamp(name, at, cost)
            for name, at, cost in ModelCall.objects.filter(
                session__project__in=projects, **window
            ).values_list("session__project__name", "created_at", "cost")
        ],
        first_units=[
            Stamp(name, at, passed is True)
            for name, at, passed in Unit.objects.filter(
                task__plan__session__project__in=projects,
                attempt=1,
                finished_at__isnull=False,
                started_at__gte=since,
                started_at__lt=until,
            ).values_list("task__plan__session__project__name", "started_at", "verification_passed")
        ],
        reviews=[
            Stamp(name, at)
            for name, at in RiskDecision.objects.filter(
                session__project__in=projects,
                review_status__in=(ReviewStatus.APPROVED, ReviewStatus.REJECTED),
                reviewed_at__gte=since,
                reviewed_at__lt=until,
            ).values_list("session__project__name", "reviewed_at")
            if at is not None  # the filter says so; the type does not
        ],
        tasks_run=[
            Stamp(name, at, task_id)
            for name, at, task_id in Unit.objects.filter(
                task__plan__session__project__in=projects,
                started_at__gte=since,
                started_at__lt=until,
            ).values_list("task__plan__session__project__name", "started_at", "task_id")
        ],
    )


def _ended(projects: QuerySet[Project], since: datetime, until: datetime) -> list[Ended]:
    """Each ended task once: its current final status, at the last move into it."""
    tasks = Task.objects.filter(plan__session__project__in=projects, status__in=FINAL)
    moves = (
        TaskTransition.objects.filter(task__in=tasks, to_status=F("task__status"))
        .order_by("task_id", "created_at", "pk")
        .values_list(
            "task_id",
            "task__plan__session__project__name",
            "to_status",
            "created_at",
            "task__plan__accepted_at",
        )
    )
    last: dict[int, Ended] = {}
    for task_id, name, status, at, accepted in moves:
        last[task_id] = Ended(name, status, at, accepted)
    return [e for e in last.values() if since <= e.at < until]
