"""What runs next: run control, the engine's own holds, and dispatch on commit."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import transaction
from django.test import override_settings

from agents_app.models import AgentSession
from agents_app.services.commands import command_run
from sf_core.actors import Actor
from sf_core.signals import session_runnable
from tasks_app.engine import dispatch as dispatch_module
from tasks_app.engine.dispatch import dispatch_on_commit, next_units
from tasks_app.lifecycle import task_transition
from tasks_app.models import HoldReason, Plan, TaskSchedule
from tasks_app.services import plan_accept

pytestmark = pytest.mark.django_db
ACTOR = Actor.system("test")


def accepted(plan: Plan, *, autonomous: bool = True) -> AgentSession:
    plan_accept(plan=plan, actor=ACTOR, autonomous=autonomous, start=False)
    return AgentSession.objects.get(pk=plan.session_id)


def test_a_task_the_engine_held_runs_again_and_a_persons_hold_stays(diamond_plan: Plan) -> None:
    session = accepted(diamond_plan)
    a, b = diamond_plan.tasks.get(key="a"), diamond_plan.tasks.get(key="b")
    task_transition(task=a, to="paused", reason="session paused: x", hold=HoldReason.SESSION_PAUSED)
    task_transition(task=b, to="paused", reason="session paused: x", hold=HoldReason.PERSON)

    assert next_units(session) == [a.pk]
    a.refresh_from_db()
    b.refresh_from_db()
    assert (a.status, a.hold_reason) == ("todo", "")
    assert (b.status, b.hold_reason) == ("paused", "person"), "the words do not decide"


def test_manual_runs_nothing_on_its_own_but_a_step_runs_one(diamond_plan: Plan) -> None:
    session = accepted(diamond_plan, autonomous=False)
    assert session.run_control == "manual"
    assert next_units(session) == []
    assert next_units(session, step=True) == [diamond_plan.tasks.get(key="a").pk]


def test_an_accepted_plan_is_dispatched_once_committed(
    diamond_plan: Plan, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks() as callbacks:
        plan_accept(plan=diamond_plan, actor=ACTOR, autonomous=True, permission_profile="trusted")
    schedule = TaskSchedule.objects.get(task__key="a", task__plan=diamond_plan)
    assert schedule.enqueued_at is None, "nothing is sent before the commit"
    for callback in callbacks:  # the commit: live updates and session_runnable
        callback()
    schedule.refresh_from_db()
    assert schedule.enqueued_at is not None, "the engine sent the due task to the workers"


def _sends(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, list[Any]]]:
    sent: list[tuple[str, list[Any]]] = []

    def send(name: str, *, args: list[Any], **_: Any) -> bool:
        sent.append((name, args))
        return True

    monkeypatch.setattr(dispatch_module, "send_by_name", send)
    return sent


@override_settings(CELERY_TASK_ALWAYS_EAGER=False)
def test_a_command_hands_the_dispatch_to_a_worker_and_the_request_goes_on(
    diamond_plan: Plan, monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: Any
) -> None:
    session = accepted(diamond_plan, autonomous=False)
    sent = _sends(monkeypatch)
    with django_capture_on_commit_callbacks(execute=True):
        command_run(session=session, text="/autonomous", actor=ACTOR)
    assert sent == [(dispatch_module.SESSION_DISPATCH_TASK, [session.pk])]
    schedule = TaskSchedule.objects.get(task__key="a", task__plan=diamond_plan)
    assert schedule.enqueued_at is None, "the worker dispatches, not the request"


@override_settings(CELERY_TASK_ALWAYS_EAGER=False)
def test_the_engine_dispatches_itself_without_the_signal(
    diamond_plan: Plan, monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: Any
) -> None:
    session = accepted(diamond_plan)
    sent = _sends(monkeypatch)
    heard: list[int] = []
    session_runnable.connect(
        lambda sender, **kw: heard.append(kw["session_id"]),
        weak=False,
        dispatch_uid="test-engine-direct",
    )
    try:
        with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
            dispatch_on_commit(session.pk)
    finally:
        session_runnable.disconnect(dispatch_uid="test-engine-direct")
    assert heard == [], "no global signal inside the engine"
    assert [name for name, _ in sent] == [dispatch_module.UNIT_RUN_TASK]
