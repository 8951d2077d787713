"""Schedules on the database: runs on time, across a DST change and a restart (the sweep
sees the clock jump), the missed-run policy, no overlap, authorization at run time."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User

from agents_app.access import AccessDenied
from agents_app.models import AgentSession, Project
from conftest import grant
from sf_core.actors import Actor
from tasks_app.features.schedules.runner import schedules_sweep
from tasks_app.features.schedules.services import (
    schedule_create,
    schedule_run_now,
    schedule_set_paused,
)
from tasks_app.features.schedules.timing import ScheduleInvalid
from tasks_app.models import Plan, PlanStatus, Schedule, ScheduleRun
from tasks_app.services import plan_reject
from tasks_app.tests.schedule_helpers import plan_spec

pytestmark = pytest.mark.django_db


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


def runs(schedule: Schedule) -> list[tuple[datetime, str, int]]:
    rows = ScheduleRun.objects.filter(schedule=schedule).order_by("occurrence")
    return [(run.occurrence, run.status, run.occurrences) for run in rows]


def finish_runs(schedule: Schedule) -> None:
    """A person rejects every plan the schedule's runs proposed: those runs are over."""
    for run in ScheduleRun.objects.filter(schedule=schedule, plan__isnull=False):
        plan = Plan.objects.get(pk=run.plan_id)
        if plan.status == PlanStatus.PROPOSED:
            plan_reject(plan=plan, reason="not tonight")


def test_a_plan_template_runs_on_time_as_a_new_session_waiting_for_review(
    project: Project, user: User
) -> None:
    schedule = schedule_create(
        project=project, spec=plan_spec(), actor=Actor.of(user), now=utc(2026, 3, 27, 12)
    )
    assert schedule.next_run_at == utc(2026, 3, 28, 1, 30)  # 02:30 CET

    assert schedules_sweep(now=utc(2026, 3, 28, 1, 29))["claimed"] == 0  # not yet
    outcome = schedules_sweep(now=utc(2026, 3, 28, 1, 30, 7))

    assert outcome["claimed"] == 1
    assert outcome["started"] == 1
    run = ScheduleRun.objects.get(schedule=schedule)
    assert (run.status, run.occurrence, run.actor) == ("proposed", utc(2026, 3, 28, 1, 30), user)
    session = AgentSession.objects.get(pk=run.session_id)
    assert session.axes.as_dict() | {"surface": "-"} == {
        "work_mode": "plan",
        "run_control": "manual",
        "permission_profile": "normal",
        "model_mode": "deep",
        "surface": "-",
    }
    assert session.created_by == user
    assert session.title == "nightly bump · 2026-03-28 02:30 CET"
    plan = Plan.objects.get(session=session)
    assert plan.status == PlanStatus.PROPOSED
    assert run.plan_id == plan.pk
    schedule.refresh_from_db()
    assert schedule.next_run_at == utc(2026, 3, 29, 1, 0)  # 03:00 CEST, after the gap


def test_a_schedule_across_the_spring_change_and_a_restart(project: Project, user: User) -> None:
    """Daily 02:30 Berlin. It runs on Mar 28, SF is down from then until Mar 30 02:40
    local: the DST-shifted Mar 29 03:00 is missed, Mar 30 runs once, and a second sweep
    after the restart adds nothing."""
    schedule = schedule_create(
        project=project, spec=plan_spec(), actor=Actor.of(user), now=utc(2026, 3, 27, 12)
    )
    schedules_sweep(now=utc(2026, 3, 28, 1, 30, 5))
    finish_runs(schedule)

    restart = utc(2026, 3, 30, 0, 40)  # 02:40 CEST, ten minutes after the occurrence
    schedules_sweep(now=restart)
    schedules_sweep(now=restart + timedelta(seconds=15))  # the next sweep: nothing new

    assert runs(schedule) == [
        (utc(2026, 3, 28, 1, 30), "proposed", 1),
        (utc(2026, 3, 29, 1, 0), "missed", 1),
        (utc(2026, 3, 30, 0, 30), "proposed", 1),
    ]
    missed = ScheduleRun.objects.get(schedule=schedule, status="missed")
    assert "2026-03-29 03:00 CEST" in missed.reason
    assert AgentSession.objects.filter(project=project).count() == 2
    schedule.refresh_from_db()
    assert schedule.next_run_at == utc(2026, 3, 31, 0, 30)


def test_a_schedule_across_the_autumn_change_runs_the_repeated_time_once(
    project: Project, user: User
) -> None:
    schedule = schedule_create(
        project=project, spec=plan_spec(), actor=Actor.of(user), now=utc(2026, 10, 24, 12)
    )
    for minute in range(0, 24 * 60, 10):  # a sweep every ten minutes through the change
        schedules_sweep(now=utc(2026, 10, 24, 22) + timedelta(minutes=minute))
        finish_runs(schedule)
    assert runs(schedule) == [(utc(2026, 10, 25, 0, 30), "proposed", 1)]
    schedule.refresh_from_db()
    assert schedule.next_run_at == utc(2026, 10, 26, 1, 30)  # 02:30 CET


def test_an_outage_longer_than_the_window_runs_nothing_and_records_every_miss(
    project: Project, user: User
) -> None:
    spec = plan_spec(cron="0 * * * *", catch_up_window="30m")
    schedule = schedule_create(
        project=project, spec=spec, actor=Actor.of(user), now=utc(2026, 5, 1)
    )
    schedules_sweep(now=utc(2026, 5, 1, 4, 45))
    assert runs(schedule) == [(utc(2026, 5, 1, h), "missed", 1) for h in (1, 2, 3, 4)]
    assert not AgentSession.objects.exists()


def test_a_run_while_the_previous_one_still_waits_is_skipped_with_the_reason(
    project: Project, user: User
) -> None:
    schedule = schedule_create(
        project=project, spec=plan_spec(), actor=Actor.of(user), now=utc(2026, 6, 1, 12)
    )
    schedules_sweep(now=utc(2026, 6, 2, 0, 30, 5))  # 02:30 CEST: the plan waits for review
    schedules_sweep(now=utc(2026, 6, 3, 0, 30, 5))  # nobody reviewed it: skipped
    first, second = ScheduleRun.objects.filter(schedule=schedule).order_by("occurrence")
    assert second.status == "skipped"
    assert second.session_id is None
    assert f"run {first.pk} (session {first.session_id}) is still going" in second.reason

    finish_runs(schedule)  # a person rejects the plan: the run is over
    schedules_sweep(now=utc(2026, 6, 4, 0, 30, 5))
    assert runs(schedule)[-1] == (utc(2026, 6, 4, 0, 30), "proposed", 1)
    assert AgentSession.objects.filter(project=project).count() == 2


def test_a_person_who_lost_the_role_gets_a_refused_run_and_no_session(
    project: Project, user: User, django_user_model: Any
) -> None:
    bob = django_user_model.objects.create(username="bob")
    grant(bob, project, "approver")
    spec = plan_spec(run_control="assisted")
    schedule = schedule_create(
        project=project, spec=spec, actor=Actor.of(bob), now=utc(2026, 6, 1, 12)
    )
    grant(bob, project, "operator")  # may no longer accept plans

    schedules_sweep(now=utc(2026, 6, 2, 0, 30, 5))

    run = ScheduleRun.objects.get(schedule=schedule)
    assert run.status == "refused"
    assert "bob is operator; the schedule needs approver to accept or reject a plan" in run.reason
    assert not AgentSession.objects.exists()


def test_a_paused_schedule_runs_nothing_and_resuming_does_not_catch_up(
    project: Project, user: User
) -> None:
    actor = Actor.of(user)
    schedule = schedule_create(
        project=project, spec=plan_spec(), actor=actor, now=utc(2026, 6, 1, 12)
    )
    schedule_set_paused(schedule=schedule, paused=True, actor=actor, now=utc(2026, 6, 1, 13))
    schedules_sweep(now=utc(2026, 6, 5))
    assert not ScheduleRun.objects.exists()

    schedule_set_paused(schedule=schedule, paused=False, actor=actor, now=utc(2026, 6, 5))
    schedules_sweep(now=utc(2026, 6, 5, 0, 1))
    assert not ScheduleRun.objects.exists()
    assert Schedule.objects.get(pk=schedule.pk).next_run_at == utc(2026, 6, 5, 0, 30)


def test_run_now_starts_at_once_without_moving_the_schedule(project: Project, user: User) -> None:
    actor = Actor.of(user)
    schedule = schedule_create(project=project, spec=plan_spec(), actor=actor)
    due = schedule.next_run_at

    run = schedule_run_now(schedule=schedule, actor=actor)

    assert (run.status, run.trigger) == ("proposed", "manual")
    assert Schedule.objects.get(pk=schedule.pk).next_run_at == due
    again = schedule_run_now(schedule=schedule, actor=actor)  # the first still waits
    assert again.status == "skipped"


def test_only_an_admin_names_another_person_and_that_person_is_checked_too(
    project: Project, user: User, django_user_model: Any
) -> None:
    bob = django_user_model.objects.create(username="bob")
    carol = django_user_model.objects.create(username="carol")
    grant(bob, project, "approver")
    grant(carol, project, "viewer")
    with pytest.raises(ScheduleInvalid, match="only a project admin may make a schedule run as"):
        schedule_create(project=project, spec=plan_spec(run_as="ada"), actor=Actor.of(bob))
    with pytest.raises(AccessDenied, match="needs the operator role"):
        schedule_create(project=project, spec=plan_spec(run_as="carol"), actor=Actor.of(user))
    made = schedule_create(project=project, spec=plan_spec(run_as="bob"), actor=Actor.of(user))
    assert (made.run_as, made.created_by) == (bob, user)
