"""agents_app's evidence keeps only a unit's id; tasks_app.models.evidence gives it the unit back.

What the old foreign keys did, the relation does: joins, ``select_related``, the reverse
managers on ``Unit``, and on delete the trace and calls go with the unit while its gate
decisions stay, unlinked.
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from agents_app.models import AgentSession, ModelCall, RiskDecision, TraceEvent
from tasks_app.models import Unit
from tasks_app.tests.conftest import make_plan, task_data

pytestmark = pytest.mark.django_db


def _decision(session: AgentSession, unit: Unit | None) -> RiskDecision:
    return RiskDecision.objects.create(
        session=session, unit=unit, tool="bash", input_normalized={"cmd": "ls"},
        input_hash="h", risk_class="read", decision="allow", rule="r", work_mode="build",
        run_control="manual", permission_profile="normal", model_mode="smart", surface="web",
    )  # fmt: skip


def _unit_with_evidence(session: AgentSession, key: str) -> tuple[Unit, RiskDecision]:
    task = make_plan(session, task_data(key)).tasks.get()
    unit = Unit.objects.create(task=task, attempt=1)
    event = TraceEvent.objects.create(session=session, unit=unit, seq=1, kind="model_step")
    ModelCall.objects.create(
        session=session, unit=unit, trace_event=event, stage="unit", model="m", cost=Decimal(1)
    )
    return unit, _decision(session, unit)


def test_deleting_a_unit_deletes_its_trace_and_calls_and_unlinks_its_decisions(
    agent_session: AgentSession,
) -> None:
    unit, decision = _unit_with_evidence(agent_session, "a")
    other, other_decision = _unit_with_evidence(agent_session, "b")
    unit.delete()
    assert not TraceEvent.objects.filter(unit_id=unit.pk).exists()
    assert not ModelCall.objects.filter(unit_id=unit.pk).exists()
    decision.refresh_from_db()
    assert decision.unit_id is None  # evidence of the gate outlives the unit
    # The other unit's evidence is untouched.
    assert (other.trace.count(), other.calls.count(), other.decisions.get()) == (
        1,
        1,
        other_decision,
    )


def test_evidence_joins_to_its_unit_and_task(agent_session: AgentSession) -> None:
    unit, decision = _unit_with_evidence(agent_session, "a")
    found = RiskDecision.objects.select_related("unit__task").get(unit__task__key="a")
    assert (found, found.unit, found.unit.task.key) == (decision, unit, "a")
    assert list(TraceEvent.objects.filter(unit=unit).values_list("unit_id", flat=True)) == [unit.pk]
    assert ModelCall.objects.filter(unit__task=unit.task).get().unit_id == unit.pk
    assert TraceEvent.objects.filter(unit=None).count() == 0
    assert Unit.objects.filter(calls__cost=Decimal(1)).get() == unit
