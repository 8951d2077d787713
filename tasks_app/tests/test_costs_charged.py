"""Every model call is in the cost ledger and charged, against the fake HTTP provider
(litellm prices the usage it reports): planning, a unit that failed on a provider error,
a timed-out unit, and a self-hosted model litellm has no price for."""

from __future__ import annotations

import dataclasses
import json
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from django.db.models import Sum
from django.test import override_settings

from agents_app.models import AgentSession, ModelCall, Project
from tasks_app.engine.unit import UnitOptions, unit_run
from tasks_app.models import Task, TaskSchedule, Unit
from tasks_app.planning import plan_from_intent
from tasks_app.tests.conftest import lint_clean_plan
from tasks_app.tests.test_engine import MODEL, repo, start, task_spec  # noqa: F401 - fixture
from tasks_app.tests.test_provider_outage import provider  # noqa: F401 - fixture
from tests.fake_provider import (
    FakeProvider,
    call,
    error,
    fake_provider,  # noqa: F401 - fixture
    openai_calls,
    openai_text,
)

pytestmark = pytest.mark.django_db
SELF_HOSTED = "openai/sf-selfhosted-coder"  # litellm has no price for it


def ledger(**where: object) -> tuple[int, Decimal]:
    calls = ModelCall.objects.filter(**where)
    return calls.count(), calls.aggregate(total=Sum("cost"))["total"] or Decimal(0)


def run(session: AgentSession, model: str = MODEL) -> Unit:
    task_id = TaskSchedule.objects.get(task__plan__session=session).task_id
    unit_run(task_id=task_id, worker="test", options=UnitOptions(model=model))
    return Unit.objects.get(task_id=task_id)


def assert_consistent(session: AgentSession, unit: Unit) -> None:
    """The unit, its task and the session say what the ledger says; nothing stays reserved."""
    unit.refresh_from_db()
    session.refresh_from_db()
    _, spent = ledger(unit=unit)
    assert unit.cost == spent
    # Tasks and sessions keep four places (their columns); the ledger and units six.
    assert Task.objects.get(pk=unit.task_id).cost_spent == spent.quantize(Decimal("0.0001"))
    _, session_total = ledger(session=session)
    assert session.cost_spent == session_total.quantize(Decimal("0.0001"))
    assert (unit.cost_reserved, session.cost_reserved) == (0, 0)


def test_a_planning_call_is_in_the_ledger_and_charged(
    plan_session: AgentSession,
    provider: FakeProvider,  # noqa: F811
) -> None:
    provider.answer(openai_text(json.dumps(lint_clean_plan())))
    with override_settings(SF_MODEL_DEEP=MODEL):
        plan_from_intent(session=plan_session, intent="add a flag")
    call_row = ModelCall.objects.get(session=plan_session)
    assert (call_row.stage, call_row.unit_id, call_row.model) == ("plan", None, MODEL)
    assert (call_row.tokens_in, call_row.tokens_out, call_row.priced) == (20, 5, True)
    assert call_row.cost > 0
    assert call_row.trace_event is not None
    assert call_row.trace_event.cost == call_row.cost
    plan_session.refresh_from_db()
    assert plan_session.cost_spent == call_row.cost.quantize(Decimal("0.0001"))


def test_a_unit_failed_by_the_provider_is_charged_what_it_spent(
    repo: Path,  # noqa: F811
    provider: FakeProvider,  # noqa: F811
) -> None:
    session, _ = start(repo, task_spec(), policy={"budgets": {"session_cost_usd": "5"}})
    provider.answer(
        openai_calls(call("list_dir", {"path": "."})),
        error(400, "this request is malformed"),
    )
    unit = run(session)
    assert unit.status == "failed"
    assert ledger(unit=unit)[0] == 1
    assert unit.cost > 0
    assert_consistent(session, unit)


@override_settings(SF_UNIT_HARD_TIMEOUT=timedelta(seconds=4))
def test_a_timed_out_unit_is_charged_what_it_spent(
    repo: Path,  # noqa: F811
    provider: FakeProvider,  # noqa: F811
) -> None:
    session, _ = start(
        repo, task_spec(max_retries=0), policy={"budgets": {"session_cost_usd": "5"}}
    )
    AgentSession.objects.filter(pk=session.pk).update(driver="workers")
    words = " ".join(f"w{number}" for number in range(900))
    provider.answer(
        openai_calls(call("list_dir", {"path": "."})),
        dataclasses.replace(openai_text(words), chunk_delay=0.1),
    )
    unit = run(session)
    assert unit.status == "timed_out", unit.summary
    count, spent = ledger(unit=unit)
    assert count >= 1
    assert spent > 0
    assert_consistent(session, unit)


def test_a_model_without_a_price_is_recorded_unpriced(
    repo: Path,  # noqa: F811
    provider: FakeProvider,  # noqa: F811
) -> None:
    session, _ = start(repo, task_spec(max_retries=0))
    provider.answer(openai_calls(call("list_dir", {"path": "."})), error(400, "stop here"))
    unit = run(session, SELF_HOSTED)
    row = ModelCall.objects.get(unit=unit)
    assert (row.model, row.priced, row.cost) == (SELF_HOSTED, False, 0)


def test_a_project_price_charges_a_model_litellm_cannot_price(
    repo: Path,  # noqa: F811
    provider: FakeProvider,  # noqa: F811
) -> None:
    prices = {SELF_HOSTED: {"input_per_token": "0.001", "output_per_token": "0.002"}}
    session, _ = start(repo, task_spec(max_retries=0), policy={"prices": prices})
    assert Project.objects.get(pk=session.project_id).parsed_policy.prices
    provider.answer(openai_calls(call("list_dir", {"path": "."})), error(400, "stop here"))
    unit = run(session, SELF_HOSTED)
    row = ModelCall.objects.get(unit=unit)
    assert (row.priced, row.cost) == (True, Decimal("0.030"))  # 20 in, 5 out
    assert_consistent(session, unit)
