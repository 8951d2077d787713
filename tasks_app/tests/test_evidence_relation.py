"""agents_app's evidence keeps only a unit's id; tasks_app.models.evidence gives it the unit back.

What the old foreign keys did, the relation does: joins, ``select_related``, the reverse
managers on ``Unit``, and on delete the trace and calls go with the unit while its gate
decisions stay, unlinked.
"""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from agents_app.models import AgentSession, ModelCall, RiskDecision, TraceEvent
from conftest import grant
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


def test_skill_uses_and_proposals_link_to_units_and_tasks(agent_session: AgentSession) -> None:
    """skills_app keeps ids; the relations held here join, cascade and unlink as the old
    foreign keys did: a unit's skill uses go with it, a proposal outlives its task."""
    from skills_app.models import Skill, SkillProposal, SkillUse

    unit, _ = _unit_with_evidence(agent_session, "a")
    other, _ = _unit_with_evidence(agent_session, "b")
    skill = Skill.objects.create(
        scope="project", project=agent_session.project, name="lint",
        source_path=".agents/skills/lint/SKILL.md", content_hash="h",
    )  # fmt: skip
    use = SkillUse.objects.create(skill=skill, session=agent_session, unit=unit, kind="load")
    kept = SkillUse.objects.create(skill=skill, session=agent_session, unit=other, kind="load")
    proposal = SkillProposal.objects.create(
        project=agent_session.project, name="fix-lint", description="d", kind="same-fix",
        fingerprint="f", skill_md="---", task=unit.task,
    )  # fmt: skip
    found = SkillUse.objects.select_related("unit__task").get(unit__task__key="a")
    assert (found, found.unit, found.unit.task.key) == (use, unit, "a")
    assert list(unit.skill_uses.all()) == [use]
    assert SkillProposal.objects.get(task__key="a").task == unit.task
    task = unit.task
    unit.delete()
    assert list(SkillUse.objects.all()) == [kept]
    task.delete()
    proposal.refresh_from_db()
    assert proposal.task_id is None
    assert SkillProposal.objects.filter(task__isnull=True).get() == proposal


def test_the_approvals_page_joins_each_decision_to_its_unit_and_task(
    client: Client, staff_user: User, agent_session: AgentSession
) -> None:
    """agents_app's approvals page shows a pending decision's task and unit through the
    relation held here (``select_related("session", "unit__task")``): one join, so three
    pending decisions of three units cost the page no more queries than one."""
    grant(staff_user, agent_session.project, "viewer")
    client.force_login(staff_user)

    def page() -> tuple[str, int]:
        RiskDecision.objects.update(decision="ask", review_status="pending")
        with CaptureQueriesContext(connection) as queries:
            html = client.get(reverse("approvals")).content.decode()
        return html, len(queries)

    units = [_unit_with_evidence(agent_session, "a")[0]]
    html, one = page()
    units += [_unit_with_evidence(agent_session, key)[0] for key in ("b", "c")]
    html, three = page()
    for unit in units:
        key = unit.task.key
        assert f'data-unit-link="{unit.pk}">{key} · unit 1</a>' in html
    assert three == one
