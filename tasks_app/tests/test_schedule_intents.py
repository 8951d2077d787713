"""An intent schedule: the run plans on a worker, then the plan waits for review
(manual) or the schedule accepts it (assisted, autonomous); planning that fails is a
failed run with the reason. And embedded mode's schedule thread."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from agents_app.models import AgentSession, Project
from conftest import grant
from sf_core.actors import Actor
from tasks_app import intake
from tasks_app.features.schedules.inline import schedules_inline_start, schedules_inline_stop
from tasks_app.features.schedules.runner import schedules_sweep
from tasks_app.features.schedules.services import schedule_create, schedule_run_now
from tasks_app.intake import plan_request_run
from tasks_app.models import Plan, PlanRequest, Schedule, ScheduleRun
from tasks_app.tests.conftest import make_plan, task_data
from tasks_app.tests.schedule_helpers import intent_spec, plan_spec
from tests.processes import wait_for

pytestmark = pytest.mark.django_db
NO_MODELS = {"SF_MODEL_FAST": "", "SF_MODEL_SMART": "", "SF_MODEL_DEEP": ""}


@pytest.fixture
def planner(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A model that is there (the pre-flight passes) and answers with a one-task plan;
    the requests sent to the workers, instead of a broker."""
    sent: list[int] = []
    monkeypatch.setattr(intake, "planning_check", lambda **_: "")
    monkeypatch.setattr(
        intake.current_app, "send_task", lambda name, args, **_: sent.append(args[0])
    )

    def plan_from_intent(*, session: AgentSession, intent: str, **_: Any) -> Plan:
        return make_plan(session, task_data("fix-flaky"))

    monkeypatch.setattr(intake, "plan_from_intent", plan_from_intent)
    return sent


def test_an_intent_run_plans_then_waits_for_review(
    project: Project, user: User, planner: list[int], django_capture_on_commit_callbacks: Any
) -> None:
    schedule = schedule_create(project=project, spec=intent_spec(), actor=Actor.of(user))
    with django_capture_on_commit_callbacks(execute=True):
        run = schedule_run_now(schedule=schedule, actor=Actor.of(user))
    assert run.status == "planning"
    request = PlanRequest.objects.get(pk=run.plan_request_id)
    assert request.intent == "find and fix one flaky test"
    assert planner == [request.pk]  # handed to the workers after commit

    schedules_sweep()  # still planning: nothing to follow
    assert ScheduleRun.objects.get(pk=run.pk).status == "planning"
    plan_request_run(request_id=request.pk)
    schedules_sweep()

    run.refresh_from_db()
    assert run.status == "proposed"
    assert Plan.objects.get(pk=run.plan_id).status == "proposed"


def test_an_assisted_intent_run_is_accepted_by_the_schedule(
    project: Project, user: User, planner: list[int], settings: Any
) -> None:
    settings.SF_MODEL_SMART = settings.SF_MODEL_DEEP = "openai/some-model"  # units could run
    schedule = schedule_create(
        project=project, spec=intent_spec(run_control="assisted"), actor=Actor.of(user)
    )
    run = schedule_run_now(schedule=schedule, actor=Actor.of(user))
    plan_request_run(request_id=run.plan_request_id)
    schedules_sweep()

    run.refresh_from_db()
    assert run.status == "started"
    plan = Plan.objects.get(pk=run.plan_id)
    assert (plan.status, plan.accepted_by, plan.accepted_run_control) == (
        "accepted",
        user,
        "assisted",
    )
    session = AgentSession.objects.get(pk=run.session_id)
    assert (session.work_mode, session.run_control) == ("build", "assisted")


def test_an_intent_run_with_no_model_fails_with_the_reason_and_leaves_no_session(
    project: Project, user: User, settings: Any
) -> None:
    for name, value in NO_MODELS.items():
        setattr(settings, name, value)
    settings.SF_REPLAY_TRACES = "/nonexistent"
    schedule = schedule_create(project=project, spec=intent_spec(), actor=Actor.of(user))
    run = schedule_run_now(schedule=schedule, actor=Actor.of(user))
    assert run.status == "failed"
    assert "no model configured for model mode deep" in run.reason
    assert run.session_id is None
    assert not AgentSession.objects.exists()
    again = schedule_run_now(schedule=schedule, actor=Actor.of(user))
    assert again.status == "failed"  # a failed run is over: no overlap with it


def test_a_planned_intent_is_refused_if_the_person_lost_the_role_meanwhile(
    project: Project, planner: list[int], django_user_model: Any, settings: Any
) -> None:
    settings.SF_MODEL_SMART = settings.SF_MODEL_DEEP = "openai/some-model"
    bob = django_user_model.objects.create(username="bob")
    grant(bob, project, "approver")
    spec = intent_spec(run_control="autonomous")
    schedule = schedule_create(project=project, spec=spec, actor=Actor.of(bob))
    run = schedule_run_now(schedule=schedule, actor=Actor.of(bob))
    plan_request_run(request_id=run.plan_request_id)
    grant(bob, project, None)
    schedules_sweep()

    run.refresh_from_db()
    assert run.status == "refused"
    assert "bob is not a member" in run.reason
    assert Plan.objects.get(pk=run.plan_id).status == "proposed"  # left for a person


@pytest.mark.django_db(transaction=True)
def test_embedded_mode_sweeps_schedules_in_a_thread_of_the_web_process(
    project: Project, user: User, settings: Any
) -> None:
    assert schedules_inline_start() is False  # team mode: the workers sweep
    spec = plan_spec(cron="* * * * *", timezone="UTC")
    schedule = schedule_create(project=project, spec=spec, actor=Actor.of(user))
    due = timezone.now().replace(second=0, microsecond=0)  # this minute's occurrence
    Schedule.objects.filter(pk=schedule.pk).update(next_run_at=due)
    settings.CELERY_TASK_ALWAYS_EAGER = True
    settings.SF_SWEEP_INTERVAL = timedelta(milliseconds=200)
    try:
        assert schedules_inline_start() is True
        wait_for(
            lambda: ScheduleRun.objects.filter(status="proposed").exists(),
            timeout=20,
            what="the embedded thread to run the schedule",
        )
    finally:
        schedules_inline_stop()
    assert ScheduleRun.objects.get(status="proposed").occurrence >= due
