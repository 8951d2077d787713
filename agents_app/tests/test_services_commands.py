"""Applying commands to sessions: the same service behind every surface."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from agents_app.commands import ConfirmationRequired
from agents_app.models import AgentSession, ModeTransition, TransitionStatus
from agents_app.services import DispatchPoint, command_run, session_apply_due
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


def test_next_asks_for_one_unit_and_keeps_the_run_control(agent_session: AgentSession) -> None:
    # /next used to switch the run control to assisted; now it is one step, whatever it is.
    outcome = run(agent_session, "/next")
    assert outcome.session.run_control == "manual"
    assert outcome.session.step_requested
    assert outcome.message.startswith("next: one unit runs, then the session pauses")
    assert "(run control stays manual)" in outcome.message


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
    # One fact per line now (it was one line: badge · status · pending).
    assert status.message.splitlines() == [
        "SF chat | manual | normal | smart · active",
        "no unit running",
        "tasks: no accepted plan",
        "steering pending: 1",
        "cost: spent $1.0000 of $4.0000 (25.0%)",
    ]
    assert run(agent_session, "/cost").message == "spent $1.0000 of $4.0000 (25.0%)"
    report = run(agent_session, "/session-report")
    lines = report.message.splitlines()
    assert lines[0].startswith(f"session {agent_session.pk} (active) on ")
    assert "cost: spent $1.0000 of $4.0000 (25.0%) · autonomous units 0 of 50" in lines
    assert "transitions: 1 (1 pending)" in lines
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


# --- /next: one unit, then pause, the run control unchanged ----------------------------


def test_next_lifts_a_pause_and_announces_even_a_manual_session(
    agent_session: AgentSession, django_capture_on_commit_callbacks: Any
) -> None:
    run(agent_session, "/pause")
    heard: list[int] = []

    def listen(sender: object, *, session_id: int, **_: Any) -> None:
        heard.append(session_id)

    session_runnable.connect(listen)
    try:
        with django_capture_on_commit_callbacks(execute=True):
            outcome = run(agent_session, "/next")
    finally:
        session_runnable.disconnect(listen)
    assert not outcome.session.paused
    assert (outcome.session.run_control, outcome.session.step_requested) == ("manual", True)
    assert heard == [agent_session.pk], "the engine hears that one unit may run"
    assert outcome.transition is not None
    assert outcome.transition.reason.startswith("/next by")


def test_choosing_a_run_control_drops_a_waiting_step(agent_session: AgentSession) -> None:
    run(agent_session, "/next")
    outcome = run(agent_session, "/autonomous")
    assert (outcome.session.run_control, outcome.session.step_requested) == ("autonomous", False)
    run(agent_session, "/next")
    assert run(agent_session, "/stop").session.step_requested is False


# --- raising the profile to unrestricted asks for --confirm ----------------------------


@pytest.mark.parametrize(
    "text",
    [
        "/permission-profile unrestricted",
        "/trust unrestricted",
        "/mode build --autonomous --permission-profile unrestricted",
        "/steer permission-profile unrestricted after-current-unit",
    ],
)
def test_unrestricted_needs_confirm_on_every_command(
    agent_session: AgentSession, text: str
) -> None:
    with pytest.raises(ConfirmationRequired) as refused:
        run(agent_session, text)
    message = str(refused.value)
    assert "lets every tool call proceed without approval" in message
    assert message.endswith(f"to confirm, append --confirm: {text} --confirm")
    assert refused.value.confirm_text == f"{text} --confirm"
    assert ModeTransition.objects.count() == 0, "a refused command changes nothing"

    outcome = run(agent_session, f"{text} --confirm")
    assert outcome.transition is not None
    assert outcome.transition.to_permission_profile == "unrestricted"


def test_lower_profiles_and_an_unrestricted_session_need_no_confirm(
    agent_session: AgentSession,
) -> None:
    assert run(agent_session, "/trust trusted").session.permission_profile == "trusted"
    run(agent_session, "/trust unrestricted --confirm")
    already = run(agent_session, "/mode build --permission-profile unrestricted")
    assert already.session.work_mode == "build"
    assert run(agent_session, "/trust restricted").session.permission_profile == "restricted"


# --- a direct command never drops pending steering silently ----------------------------


def test_a_direct_change_supersedes_steering_on_the_same_axis_visibly(
    agent_session: AgentSession,
) -> None:
    steer = run(agent_session, "/steer model-mode deep after-current-unit").transition
    other = run(agent_session, "/steer mode review next-milestone").transition
    assert steer is not None
    assert other is not None

    outcome = run(agent_session, "/model-mode fast")

    steer.refresh_from_db()
    other.refresh_from_db()
    assert steer.status == TransitionStatus.SUPERSEDED
    assert steer.reason.endswith("(superseded by /model-mode fast by test)")
    assert other.status == TransitionStatus.PENDING, "steering on other axes is kept"
    assert outcome.superseded == [steer]
    assert outcome.message == (
        "model_mode smart → fast: SF chat | manual | normal | fast"
        f"; superseded pending steer #{steer.pk} (model_mode smart → deep, after-current-unit)"
    )
    session_apply_due(session=agent_session, point=DispatchPoint.MILESTONE)
    agent_session.refresh_from_db()
    assert agent_session.model_mode == "fast", "the superseded steer never applies"


def test_stop_supersedes_all_pending_steering_and_says_so(agent_session: AgentSession) -> None:
    steer = run(agent_session, "/steer mode review next-milestone").transition
    assert steer is not None
    outcome = run(agent_session, "/stop")
    steer.refresh_from_db()
    assert steer.status == TransitionStatus.SUPERSEDED
    assert outcome.message.startswith("stopped: no more units start: SF chat | manual")
    assert f"; superseded pending steer #{steer.pk} (work_mode chat → review" in outcome.message


def test_the_timeline_shows_superseded_steering(
    logged_in_client: Client, agent_session: AgentSession
) -> None:
    steer = run(agent_session, "/steer model-mode deep after-current-unit").transition
    run(agent_session, "/model-mode fast")
    page = logged_in_client.get(reverse("session-detail", args=[agent_session.pk]))
    html = page.content.decode()
    assert f'data-transition="{steer.pk}" data-status="superseded"' in html  # type: ignore[union-attr]
    assert "(superseded by /model-mode fast by test)" in html


def test_the_web_bar_asks_before_unrestricted_and_shows_status_in_lines(
    logged_in_client: Client, agent_session: AgentSession
) -> None:
    url = reverse("session-command", args=[agent_session.pk])
    htmx = {"HTTP_HX_REQUEST": "true"}
    asked = logged_in_client.post(url, {"text": "/trust unrestricted"}, **htmx).content.decode()
    assert "append --confirm" in asked
    assert "data-confirm-command" in asked
    assert '"text": "/trust unrestricted \\u002D\\u002Dconfirm"' in asked
    agent_session.refresh_from_db()
    assert agent_session.permission_profile == "normal"

    logged_in_client.post(url, {"text": "/trust unrestricted --confirm"}, **htmx)
    agent_session.refresh_from_db()
    assert agent_session.permission_profile == "unrestricted"

    status = logged_in_client.post(url, {"text": "/status"}, **htmx).content.decode()
    assert "SF chat | manual | unrestricted | smart · active<br>no unit running<br>" in status
