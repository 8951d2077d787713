"""Applying commands to sessions: the same service behind every surface."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from agents_app.models import AgentSession, ModeTransition, TransitionStatus
from agents_app.services import command_run
from sf_core.actors import Actor
from sf_core.errors import CommandRejected
from sf_core.signals import session_runnable

pytestmark = pytest.mark.django_db
ACTOR = Actor.system("test")


def run(session: AgentSession, text: str):  # type: ignore[no-untyped-def]
    return command_run(session=session, text=text, actor=ACTOR)


def test_a_combined_mode_command_changes_all_named_axes_in_one_transition(
    agent_session: AgentSession,
) -> None:
    outcome = run(
        agent_session, "/mode build --autonomous --permission-profile trusted --model-mode deep"
    )
    assert outcome.session.axes.as_dict() == {
        "work_mode": "build",
        "run_control": "autonomous",
        "permission_profile": "trusted",
        "model_mode": "deep",
        "surface": "web",
    }
    assert ModeTransition.objects.count() == 1
    assert outcome.message.endswith("SF build | autonomous | trusted | deep")
    assert "/mode build --autonomous" in outcome.transition.reason  # type: ignore[union-attr]


def test_a_rejected_command_changes_nothing(agent_session: AgentSession) -> None:
    with pytest.raises(CommandRejected):
        run(agent_session, "/mode build --permission-profile god")
    agent_session.refresh_from_db()
    assert agent_session.work_mode == "chat"
    assert ModeTransition.objects.count() == 0


def test_steer_is_stored_pending(agent_session: AgentSession) -> None:
    outcome = run(agent_session, "/steer model-mode deep after-current-unit")
    assert outcome.pending
    assert outcome.message.startswith("pending (after-current-unit): model_mode smart → deep")
    assert outcome.session.model_mode == "smart"


def test_pause_then_autonomous_resumes(agent_session: AgentSession) -> None:
    assert run(agent_session, "/pause").session.paused
    outcome = run(agent_session, "/autonomous")
    assert not outcome.session.paused
    assert outcome.session.run_control == "autonomous"


def test_next_is_assisted_run_control(agent_session: AgentSession) -> None:
    assert run(agent_session, "/next").session.run_control == "assisted"


def test_stop_returns_to_manual(agent_session: AgentSession) -> None:
    run(agent_session, "/autonomous")
    assert run(agent_session, "/stop").session.run_control == "manual"


def test_read_only_commands_change_nothing(agent_session: AgentSession) -> None:
    AgentSession.objects.filter(pk=agent_session.pk).update(
        cost_budget=Decimal("4"), cost_spent=Decimal("1")
    )
    agent_session.refresh_from_db()
    run(agent_session, "/steer mode review next-milestone")
    status = run(agent_session, "/status")
    assert status.message == "SF chat | manual | normal | smart · active · 1 pending"
    assert run(agent_session, "/cost").message == "spent $1.0000 of $4.0000 (25.0%)"
    report = run(agent_session, "/session-report")
    assert report.message.startswith("1 transitions · spent $1.0000")
    assert report.data["pending_transitions"] == 1
    assert run(agent_session, "/tasks").message
    assert ModeTransition.objects.filter(status=TransitionStatus.APPLIED).count() == 0


def test_a_session_that_may_run_announces_it_after_commit(
    agent_session: AgentSession, django_capture_on_commit_callbacks: Any
) -> None:
    heard: list[int] = []

    def listen(sender: object, *, session_id: int, **_: Any) -> None:
        heard.append(session_id)

    session_runnable.connect(listen)
    try:
        with django_capture_on_commit_callbacks() as callbacks:
            run(agent_session, "/autonomous")
            assert heard == [], "nothing is announced before the commit"
        for callback in callbacks:
            callback()
        run(agent_session, "/pause")
    finally:
        session_runnable.disconnect(listen)
    assert heard == [agent_session.pk], "a paused session announces nothing"
