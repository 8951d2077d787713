"""What the schedules page, /tasks, the dashboard, the CLI and the API read."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from zoneinfo import ZoneInfo

from django.db.models import OuterRef, Q, QuerySet, Subquery

from agents_app.models import Project, SessionStatus
from tasks_app.features.schedules.timing import duration_text, local_text
from tasks_app.models import (
    STARTED_RUN_STATUSES,
    PlanRequestStatus,
    PlanStatus,
    Schedule,
    ScheduleRun,
)

# A plan of the session that still waits for a person or still runs.
OPEN_PLAN_STATUSES = (PlanStatus.DRAFT, PlanStatus.PROPOSED, PlanStatus.ACCEPTED)


def schedule_busy_run(*, schedule: Schedule) -> ScheduleRun | None:
    """The earlier run whose work is still going, if any: its session is active and
    still has something to do — an intent being planned, a plan waiting for review, or
    an accepted plan not finished. While one is, a new occurrence is skipped (never two
    overlapping runs of one schedule). A run whose planning failed, whose plan was
    rejected or finished, or whose session a person stopped, is over."""
    working = Q(session__plan_requests__status=PlanRequestStatus.PLANNING) | Q(
        session__plans__status__in=OPEN_PLAN_STATUSES
    )
    runs = ScheduleRun.objects.filter(
        schedule=schedule, status__in=STARTED_RUN_STATUSES, session__status=SessionStatus.ACTIVE
    )
    return runs.filter(working).select_related("session").order_by("-pk").first()


@dataclass(frozen=True)
class ScheduleRow:
    """A schedule as the pages show it: next run in its zone and in UTC, last run."""

    schedule: Schedule
    next_local: str
    next_utc: datetime | None
    last_run: ScheduleRun | None

    @property
    def catch_up(self) -> str:
        return duration_text(self.schedule.catch_up_window)


def schedule_row(schedule: Schedule, last_run: ScheduleRun | None) -> ScheduleRow:
    if schedule.paused:
        return ScheduleRow(schedule, "paused", None, last_run)
    when = schedule.next_run_at
    return ScheduleRow(schedule, local_text(when, ZoneInfo(schedule.timezone)), when, last_run)


def _last_runs(schedules: Iterable[Schedule]) -> dict[int, ScheduleRun]:
    """The latest run of each schedule (by occurrence), two queries per page."""
    ids = [schedule.pk for schedule in schedules]
    if not ids:
        return {}
    latest = ScheduleRun.objects.filter(schedule=OuterRef("pk")).order_by("-last_occurrence", "-pk")
    run_ids = Schedule.objects.filter(pk__in=ids).annotate(
        last_run_id=Subquery(latest.values("pk")[:1])
    )
    wanted = [row for row in run_ids.values_list("last_run_id", flat=True) if row is not None]
    runs = ScheduleRun.objects.select_related("session").in_bulk(wanted)
    return {run.schedule_id: run for run in runs.values()}


def project_schedules(*, project: Project) -> list[ScheduleRow]:
    schedules = list(Schedule.objects.filter(project=project).select_related("run_as"))
    last = _last_runs(schedules)
    return [schedule_row(schedule, last.get(schedule.pk)) for schedule in schedules]


def schedules_upcoming(*, projects: QuerySet[Project], limit: int = 10) -> list[ScheduleRow]:
    """The active schedules of ``projects`` by their next run, soonest first (/tasks and
    the dashboard)."""
    schedules = list(
        Schedule.objects.filter(project__in=projects, paused=False)
        .select_related("project")
        .order_by("next_run_at", "pk")[:limit]
    )
    last = _last_runs(schedules)
    return [schedule_row(schedule, last.get(schedule.pk)) for schedule in schedules]


def schedule_runs(*, schedule: Schedule, limit: int = 50) -> list[ScheduleRun]:
    runs = ScheduleRun.objects.filter(schedule=schedule).select_related("session", "actor")
    return list(runs.order_by("-occurrence", "-pk")[:limit])
