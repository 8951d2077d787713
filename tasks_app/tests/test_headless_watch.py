"""Watching a session one step at a time (the API's live events): every event's id is
a place to resume from that gives exactly the events after it, none twice."""

from __future__ import annotations

import base64
import zlib
from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
from django.utils import timezone

from agents_app.models import AgentSession, ModeTransition, RiskDecision, TraceEvent
from agents_app.services import session_change_mode, session_finish
from sf_core.actors import SF
from tasks_app.features.headless.cursor import ObserverState
from tasks_app.features.headless.events import event_parse
from tasks_app.features.headless.watch import watch_begin, watch_heartbeat, watch_step
from tasks_app.lifecycle import task_transition
from tasks_app.models import Plan, Unit
from tasks_app.services import plan_accept
from tasks_app.tests.conftest import make_plan, task_data

pytestmark = pytest.mark.django_db


def decision(session: AgentSession, review_status: str = "pending") -> RiskDecision:
    return RiskDecision.objects.create(
        session=session,
        tool="run_command",
        input_normalized={"command": "rm -rf build"},
        input_hash="x" * 64,
        risk_class="destructive",
        decision="ask",
        rule="test",
        work_mode="build",
        run_control="autonomous",
        permission_profile="normal",
        model_mode="smart",
        surface="web",
        review_status=review_status,
    )


def history(session: AgentSession) -> RiskDecision:
    """A plan accepted and run: transitions, task moves, a unit with tool calls and a
    model step, and a decision still pending."""
    plan = make_plan(session, task_data("a"), task_data("b"))
    plan_accept(plan=plan, actor=SF, autonomous=True, permission_profile="normal", start=False)
    task = plan.tasks.get(key="a")
    task_transition(task=task, to="in_progress", reason="unit started")
    unit = Unit.objects.create(task=task, attempt=1, model="m")
    for seq, (kind, name) in enumerate([("tool_call", "read_file"), ("model_step", "")], 1):
        TraceEvent.objects.create(session=session, unit=unit, seq=seq, kind=kind, name=name)
    pending = decision(session)
    Unit.objects.filter(pk=unit.pk).update(status="succeeded", finished_at=timezone.now())
    task_transition(task=task, to="verifying", reason="the agent finished")
    return pending


def everything(session_id: int, state: ObserverState) -> list[tuple[Any, str]]:
    step = watch_step(session_id=session_id, state=state)
    return step.events


def keys(events: list[tuple[Any, str]]) -> list[str]:
    return [event.model_dump_json(exclude={"at"}) for event, _ in events]


def test_every_event_id_resumes_with_exactly_the_events_after_it(
    agent_session: AgentSession,
) -> None:
    pending = history(agent_session)
    opening, start = watch_begin(session_id=agent_session.pk, from_start=True)
    assert opening.type == "session"
    first = everything(agent_session.pk, start)
    assert {"plan", "transition", "task", "unit", "tool_call", "decision"} == {
        e.type for e, _ in first
    }
    assert [e.tool for e, _ in first if e.type == "tool_call"] == ["read_file"]  # no model step
    for index, (_, event_id) in enumerate(first):
        rest = everything(agent_session.pk, ObserverState.from_token(event_id))
        assert keys(rest) == keys(first[index + 1 :]), index
    # What happens next continues from the last id, once.
    RiskDecision.objects.filter(pk=pending.pk).update(
        review_status="approved", reviewed_at=timezone.now()
    )
    later = everything(agent_session.pk, ObserverState.from_token(first[-1][1]))
    assert [(e.type, e.review_status) for e, _ in later] == [("decision", "approved")]
    assert everything(agent_session.pk, ObserverState.from_token(later[-1][1])) == []


def test_rows_keep_their_order_when_time_runs_backwards(agent_session: AgentSession) -> None:
    """A steering change applied late has a later time than a newer one: ids still
    resume after the right row (the table's row order is kept, not re-sorted)."""
    older = session_change_mode(
        session=agent_session, changes={"model_mode": "fast"}, reason="one", actor=SF
    )
    agent_session.refresh_from_db()
    session_change_mode(
        session=agent_session, changes={"model_mode": "deep"}, reason="two", actor=SF
    )
    ModeTransition.objects.filter(pk=older.pk).update(
        applied_at=timezone.now() + timedelta(minutes=5)
    )
    _, start = watch_begin(session_id=agent_session.pk, from_start=True)
    first = everything(agent_session.pk, start)
    assert [e.reason for e, _ in first] == ["one", "two"]
    rest = everything(agent_session.pk, ObserverState.from_token(first[0][1]))
    assert [e.reason for e, _ in rest] == ["two"]


def test_a_finished_session_ends_with_one_result(agent_session: AgentSession) -> None:
    plan = make_plan(agent_session, task_data("a"))
    plan_accept(plan=plan, actor=SF, autonomous=True, permission_profile="normal", start=False)
    Plan.objects.filter(pk=plan.pk).update(status="done", finished_at=timezone.now())
    session_finish(session=agent_session, status="completed", reason="plan done", actor=SF)
    _, start = watch_begin(session_id=agent_session.pk, from_start=True)
    step = watch_step(session_id=agent_session.pk, state=start)
    assert step.finished
    result = step.events[-1][0]
    assert (result.type, result.session, result.plan) == ("result", agent_session.pk, plan.pk)
    event_parse(result.model_dump_json())  # the schema headless prints
    again = watch_step(
        session_id=agent_session.pk, state=ObserverState.from_token(step.events[-1][1])
    )
    assert again.finished
    assert again.events == []
    plan_event = next(e for e, _ in step.events if e.type == "plan")
    assert plan_event.status == "done"
    assert plan_event.at == Plan.objects.get(pk=plan.pk).finished_at  # timed when it ended


def test_a_heartbeat_counts_the_tasks(agent_session: AgentSession) -> None:
    make_plan(agent_session, task_data("a"), task_data("b"))
    beat = watch_heartbeat(session_id=agent_session.pk)
    assert beat is not None
    assert beat.tasks == {"todo": 2}
    assert watch_heartbeat(session_id=987654) is None


def test_ids_round_trip_and_bad_ones_say_what_is_wrong() -> None:
    state = ObserverState(
        session=3, transition=4, units={7: "running", 9: "failed"}, plans={2: "accepted"}
    )
    state.pending = {11}
    assert ObserverState.from_token(state.token()) == state
    assert "\n" not in state.token()
    for bad, words in [
        ("garbage", "starts with '1.'"),
        ("1.!!!", "does not decode"),
        ("1." + base64.urlsafe_b64encode(zlib.compress(b'{"s": 0}')).decode(), "does not decode"),
        ("1." + "A" * 70_000, "longer than"),
    ]:
        with pytest.raises(ValueError, match=words):
            ObserverState.from_token(bad)
    bomb = zlib.compress(b'{"s": 1, "u": {' + b" " * 5_000_000 + b"}}")
    with pytest.raises(ValueError, match=r"does not decode|too large"):
        ObserverState.from_token("1." + base64.urlsafe_b64encode(bomb).decode())


def test_a_units_cost_is_in_its_end_event(agent_session: AgentSession) -> None:
    task = make_plan(agent_session, task_data("a")).tasks.get()
    Unit.objects.create(
        task=task, attempt=1, status="failed", cost=Decimal("0.5"), finished_at=timezone.now()
    )
    _, start = watch_begin(session_id=agent_session.pk, from_start=True)
    units = [e for e, _ in everything(agent_session.pk, start) if e.type == "unit"]
    assert [(u.status, u.cost_usd) for u in units] == [
        ("running", "0.500000"),
        ("failed", "0.500000"),
    ]
