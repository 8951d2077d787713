"""Planning through the units' router, against the fake HTTP provider (litellm makes
real requests): backoff, cost and trace, a refused JSON schema, an outage, headless's
exit code, and a resumed run that does not pay for the same planning call twice."""

from __future__ import annotations

import json
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from django.test import override_settings

from agents_app.models import AgentSession, TraceEvent
from tasks_app import planning
from tasks_app.engine.replaying import demo_repo_create
from tasks_app.features.headless import runner
from tasks_app.models import Plan, PlanStatus
from tasks_app.planning import PlanningFailed, plan_from_intent
from tasks_app.tests.conftest import lint_clean_plan
from tests.cli import run_sf
from tests.fake_provider import (
    FakeProvider,
    fake_provider,  # noqa: F401 - fixture
    openai_text,
    rate_limited,
    schema_refused,
    server_error,
)

pytestmark = pytest.mark.django_db
DEEP = "openai/gpt-4o"  # litellm knows its price: the calls cost something
PLAN = json.dumps(lint_clean_plan())


@pytest.fixture
def deep(fake_provider: FakeProvider) -> Iterator[FakeProvider]:  # noqa: F811
    endpoint = {"api_base": fake_provider.openai_base, "api_key": "sk-fake"}
    with override_settings(
        SF_MODEL_DEEP=DEEP, SF_MODEL_FALLBACK="", SF_MODEL_ENDPOINTS={"deep": endpoint}
    ):
        yield fake_provider


def planned(session: AgentSession, slept: list[float], **extra: Any) -> Plan:
    return plan_from_intent(session=session, intent="add a flag", sleep=slept.append, **extra)


def planning_events(session: AgentSession) -> list[TraceEvent]:
    return list(TraceEvent.objects.filter(session=session, unit=None).order_by("seq"))


def test_a_rate_limit_is_waited_out_then_the_call_is_traced_and_charged(
    plan_session: AgentSession, deep: FakeProvider
) -> None:
    deep.answer(rate_limited(retry_after=3), openai_text(PLAN))
    slept: list[float] = []
    plan = planned(plan_session, slept)
    assert plan.status == PlanStatus.PROPOSED
    assert [t.key for t in plan.tasks.all()] == ["flag", "docs"]
    assert slept == [3.0]  # the router's backoff, not a crash
    assert len(deep.requests) == 2
    assert deep.requests[1].body["response_format"]["json_schema"]["name"] == "PlanSpec"
    step = next(e for e in planning_events(plan_session) if e.kind == "model_step")
    assert (step.name, step.payload["stage"], step.payload["content"]) == (DEEP, "plan", PLAN)
    assert "rate limited; waiting 3 s" in " ".join(step.payload["notes"])
    assert (step.tokens_in, step.tokens_out) == (20, 5)
    assert step.cost > 0
    plan_session.refresh_from_db()
    assert plan_session.cost_spent == step.cost.quantize(Decimal("0.0001"))
    note = planning_events(plan_session)[-1]
    assert note.payload == {"stage": "plan", "plan": plan.pk, "status": "proposed"}


def test_a_provider_refusing_the_json_schema_is_asked_for_json_in_the_text(
    plan_session: AgentSession, deep: FakeProvider
) -> None:
    deep.answer(schema_refused(), openai_text(f"Here is the plan:\n{PLAN}\nGood luck."))
    plan = planned(plan_session, [])
    assert plan.status == PlanStatus.PROPOSED
    assert "response_format" in deep.requests[0].body
    assert "response_format" not in deep.requests[1].body
    assert "PlanSpec" in deep.requests[1].body["messages"][0]["content"]  # said in the prompt
    step = next(e for e in planning_events(plan_session) if e.kind == "model_step")
    assert "refused the response format" in " ".join(step.payload["notes"])


def test_an_outage_ends_planning_with_one_clear_line(
    plan_session: AgentSession, deep: FakeProvider
) -> None:
    deep.answer(*[server_error(503)] * 4)
    slept: list[float] = []
    with pytest.raises(PlanningFailed) as caught:
        planned(plan_session, slept)
    message = str(caught.value)
    assert message.startswith(f"planning failed: {DEEP}: ")
    assert "\n" not in message
    assert slept == [2.0, 4.0, 8.0]
    assert len(deep.requests) == 4
    assert not Plan.objects.exists()
    error = planning_events(plan_session)[-1]
    assert (error.kind, error.payload["stage"]) == ("error", "plan")


def test_a_resumed_run_reuses_the_planning_call_it_paid_for(
    plan_session: AgentSession, deep: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    deep.answer(openai_text(PLAN))
    real_create = planning.plan_create

    def crash(**kwargs: Any) -> Plan:
        raise RuntimeError("the process died right after the model answered")

    monkeypatch.setattr(planning, "plan_create", crash)
    with pytest.raises(RuntimeError):
        planned(plan_session, [])
    plan_session.refresh_from_db()
    paid = plan_session.cost_spent
    assert paid > 0
    monkeypatch.setattr(planning, "plan_create", real_create)
    plan = planned(plan_session, [], reuse=True)
    assert plan.status == PlanStatus.PROPOSED
    assert len(deep.requests) == 1  # not asked again
    plan_session.refresh_from_db()
    assert plan_session.cost_spent == paid
    reused = [e for e in planning_events(plan_session) if "reused" in e.payload]
    assert len(reused) == 1


def test_headless_reports_a_planning_outage_as_an_error_exit_1(
    tmp_path: Path, deep: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = demo_repo_create(tmp_path / "greet")
    monkeypatch.setattr(runner.HeadlessRun, "install_signal_handlers", lambda self: None)
    monkeypatch.setattr(runner, "session_lock", lambda session_id: None)  # no extra connection
    slept: list[float] = []
    monkeypatch.setattr(planning, "_sleep", slept.append)
    deep.answer(*[server_error(502)] * 4)
    code, out, err = run_sf(
        "headless", "--project", str(repo), "--intent", "add a flag", "--output-format", "json"
    )
    assert code == 1
    result = json.loads(out.strip().splitlines()[-1])
    assert (result["status"], result["exit_code"], result["ok"]) == ("error", 1, False)
    assert result["reason"].startswith(f"planning failed: {DEEP}: ")
    assert "Traceback" not in err
    assert slept == [2.0, 4.0, 8.0]
