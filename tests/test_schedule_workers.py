"""Schedules run by real Celery worker processes' sweeps: a restart applies the
missed-run policy exactly once (even with two workers sweeping), and concurrent sweeps
never start one occurrence twice nor two runs of one schedule side by side."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.utils import timezone

from agents_app.models import AgentSession, Project
from sf_core.actors import Actor
from tasks_app.features.schedules.runner import schedule_run_start, schedules_sweep
from tasks_app.features.schedules.services import schedule_create
from tasks_app.models import Plan, Schedule, ScheduleRun, ScheduleRunStatus
from tasks_app.services import plan_reject
from tasks_app.tests.schedule_helpers import plan_spec
from tests.processes import WorkerProcess, wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]
FAST = {"SF_WORKER_HEARTBEAT": "1s", "SF_SWEEP_INTERVAL": "1s"}
BERLIN = ZoneInfo("Europe/Berlin")


def daily_at_half_an_hour_ago() -> tuple[str, datetime]:
    """A daily cron expression (Berlin wall-clock time) whose occurrence today was
    30 minutes ago, and that instant: due now, and not due again for a day."""
    due = (timezone.now() - timedelta(minutes=30)).replace(second=0, microsecond=0)
    local = due.astimezone(BERLIN)
    return f"{local.minute} {local.hour} * * *", due.astimezone(UTC)


def rows(schedule: Schedule) -> list[tuple[datetime, str]]:
    found = ScheduleRun.objects.filter(schedule=schedule).order_by("occurrence")
    return list(found.values_list("occurrence", "status"))


def test_a_restart_applies_the_missed_run_policy_exactly_once(project: Project, user: User) -> None:
    cron, due = daily_at_half_an_hour_ago()
    schedule = schedule_create(project=project, spec=plan_spec(cron=cron), actor=Actor.of(user))
    Schedule.objects.filter(pk=schedule.pk).update(next_run_at=due)  # due 30 minutes ago

    first = WorkerProcess(extra_env=FAST).start()
    try:
        wait_for(lambda: rows(schedule) == [(due, "proposed")], timeout=60, what="the first run")
    finally:
        first.stop()
    run = ScheduleRun.objects.get(schedule=schedule)
    plan_reject(plan=Plan.objects.get(pk=run.plan_id), reason="reviewed")  # that run is over

    # While no worker runs, the schedule's clock moves: its first run was three days
    # ago, so the two days since and today's occurrence were all due during the outage.
    ScheduleRun.objects.filter(pk=run.pk).update(
        occurrence=due - timedelta(days=3), last_occurrence=due - timedelta(days=3)
    )
    Schedule.objects.filter(pk=schedule.pk).update(next_run_at=due - timedelta(days=2))

    # Two workers come back at once; both sweep every second.
    restarted = [WorkerProcess(extra_env=FAST), WorkerProcess(extra_env=FAST)]
    for worker in restarted:
        worker.start()
    try:
        wait_for(lambda: len(rows(schedule)) == 4, timeout=60, what="the policy to apply")
        settled = wait_for(
            lambda: ScheduleRun.objects.filter(status=ScheduleRunStatus.PENDING).count() == 0,
            timeout=30,
            what="the run to start",
        )
        assert settled
        time.sleep(5)  # about five more sweeps by each worker: they must change nothing
    finally:
        for worker in restarted:
            worker.stop()

    assert rows(schedule) == [
        (due - timedelta(days=3), "proposed"),
        (due - timedelta(days=2), "missed"),
        (due - timedelta(days=1), "missed"),
        (due, "proposed"),  # within the one-hour catch-up window: runs, once
    ]
    assert AgentSession.objects.filter(project=project).count() == 2
    schedule.refresh_from_db()
    assert schedule.next_run_at == due + timedelta(days=1)


def in_threads(count: int, target: Callable[[int], Any]) -> list[Any]:
    """Run ``target(n)`` in ``count`` threads released together; their results."""
    barrier = threading.Barrier(count)
    results: list[Any] = [None] * count

    def run(n: int) -> None:
        barrier.wait()
        try:
            results[n] = target(n)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(n,)) for n in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return results


def test_concurrent_sweeps_start_one_run_of_a_due_occurrence(project: Project, user: User) -> None:
    schedule = schedule_create(
        project=project,
        spec=plan_spec(),
        actor=Actor.of(user),
        now=datetime(2026, 6, 1, 12, tzinfo=UTC),
    )
    now = datetime(2026, 6, 2, 0, 30, 5, tzinfo=UTC)

    in_threads(4, lambda _: schedules_sweep(now=now))

    assert rows(schedule) == [(datetime(2026, 6, 2, 0, 30, tzinfo=UTC), "proposed")]
    assert AgentSession.objects.filter(project=project).count() == 1


def test_two_pending_runs_started_side_by_side_never_overlap(project: Project, user: User) -> None:
    schedule = schedule_create(project=project, spec=plan_spec(), actor=Actor.of(user))
    now = timezone.now()
    pending = [
        ScheduleRun.objects.create(
            schedule=schedule,
            occurrence=now - timedelta(seconds=n),
            last_occurrence=now - timedelta(seconds=n),
            status=ScheduleRunStatus.PENDING,
        )
        for n in (1, 2)
    ]

    in_threads(2, lambda n: schedule_run_start(run_id=pending[n].pk, now=now))

    statuses = sorted(
        ScheduleRun.objects.filter(schedule=schedule).values_list("status", flat=True)
    )
    assert statuses == ["proposed", "skipped"]
    assert AgentSession.objects.filter(project=project).count() == 1
