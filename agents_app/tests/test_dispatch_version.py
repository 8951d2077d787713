"""The session's dispatch version (migration 0016) and the gate's decisions stored on a
reading still current: what raises the version, what leaves it alone, and what the
gate does with a reading that is stale."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from agents_app.gate.approvals import decision_review
from agents_app.gate.contract import StaleReading
from agents_app.gate.session import SessionGate
from agents_app.models import (
    Activity,
    AgentSession,
    ApprovalRule,
    Project,
    ReviewScope,
    RiskDecision,
)
from agents_app.services import command_run, session_read
from agents_app.services.dispatch_points import DispatchPoint
from sf_core.actors import Actor

pytestmark = pytest.mark.django_db
PERSON = Actor.system("person")


def version(session: AgentSession) -> int:
    return AgentSession.objects.values_list("dispatch_version", flat=True).get(pk=session.pk)


def test_what_the_gate_decides_on_raises_it(agent_session: AgentSession) -> None:
    before = version(agent_session)
    AgentSession.objects.filter(pk=agent_session.pk).update(permission_profile="restricted")
    assert version(agent_session) == before + 1
    AgentSession.objects.filter(pk=agent_session.pk).update(paused=True)
    assert version(agent_session) == before + 2
    AgentSession.objects.filter(pk=agent_session.pk).update(interrupt_requested=True)
    assert version(agent_session) == before + 3


def test_what_the_engine_writes_as_it_goes_leaves_it(agent_session: AgentSession) -> None:
    before = version(agent_session)
    AgentSession.objects.filter(pk=agent_session.pk).update(
        activity=Activity.TOOL, cost_spent=Decimal("1.5"), autonomous_continues=3
    )
    assert version(agent_session) == before


def test_a_save_of_an_older_copy_never_lowers_it(agent_session: AgentSession) -> None:
    old = AgentSession.objects.get(pk=agent_session.pk)
    AgentSession.objects.filter(pk=agent_session.pk).update(work_mode="build")
    raised = version(agent_session)
    old.title = "renamed"
    old.save()  # its dispatch_version is the older value, and its work_mode too
    assert version(agent_session) > raised, "the work mode went back: a change again"
    old.refresh_from_db()
    old.title = "renamed again"
    old.save()
    assert version(agent_session) == old.dispatch_version


def test_steering_pending_raises_it(agent_session: AgentSession) -> None:
    before = version(agent_session)
    outcome = command_run(
        session=agent_session, text="/steer model-mode deep after-current-unit", actor=PERSON
    )
    assert outcome.pending
    assert version(agent_session) > before


def test_a_rule_or_a_policy_of_the_project_raises_it(
    agent_session: AgentSession, project: Project
) -> None:
    before = version(agent_session)
    ApprovalRule.objects.create(
        project=project, scope=ReviewScope.PROJECT, tool="run_command", pattern="make test"
    )
    assert version(agent_session) == before + 1
    Project.objects.filter(pk=project.pk).update(policy={"deny": []})
    assert version(agent_session) == before + 2
    ApprovalRule.objects.filter(project=project).delete()
    assert version(agent_session) == before + 3


def test_a_review_and_a_once_approval_used_raise_it(
    agent_session: AgentSession, reviewer: User
) -> None:
    decision = RiskDecision.objects.create(
        session=agent_session,
        tool="run_command",
        input_normalized={"command": "curl example.com"},
        input_hash="0" * 64,
        risk_class="network",
        decision="ask",
        rule="network: ask",
        reason="wants the network",
        review_status="pending",
        **agent_session.axes.as_dict(),
    )
    before = version(agent_session)
    decision_review(decision=decision, reviewer=reviewer, approve=True)
    assert version(agent_session) == before + 1
    RiskDecision.objects.filter(pk=decision.pk).update(used_at=timezone.now())
    assert version(agent_session) == before + 2


def gate(session: AgentSession, reading: AgentSession, tmp_path: Path, stale: list[Any]) -> Any:
    return SessionGate(
        session_id=session.pk,
        worktree=tmp_path,
        source=lambda: reading,
        on_stale=lambda: stale.append(True),
        activity=Activity.TOOL,
    )


def test_the_gate_stores_its_decision_and_the_activity_on_a_current_reading(
    agent_session: AgentSession, tmp_path: Path
) -> None:
    reading, _ = session_read(session_id=agent_session.pk, point=DispatchPoint.BEFORE_TOOL)
    stale: list[Any] = []

    verdict = gate(agent_session, reading, tmp_path, stale).check("read_file", {"path": "a"}, "h")

    assert not stale
    stored = RiskDecision.objects.get()
    assert (stored.pk, stored.tool, stored.input_hash) == (verdict.decision_id, "read_file", "h")
    assert AgentSession.objects.get(pk=agent_session.pk).activity == Activity.TOOL


def test_a_stale_reading_stores_nothing_and_says_so(
    agent_session: AgentSession, tmp_path: Path
) -> None:
    reading, _ = session_read(session_id=agent_session.pk, point=DispatchPoint.BEFORE_TOOL)
    command_run(session=agent_session, text="/pause", actor=PERSON)
    stale: list[Any] = []

    with pytest.raises(StaleReading):
        gate(agent_session, reading, tmp_path, stale).check("read_file", {"path": "a"}, "h")

    assert stale == [True], "the engine is told to read afresh"
    assert not RiskDecision.objects.exists()
    assert AgentSession.objects.get(pk=agent_session.pk).activity != Activity.TOOL


def test_a_once_approval_is_not_used_on_a_stale_reading(
    agent_session: AgentSession, tmp_path: Path
) -> None:
    approved = RiskDecision.objects.create(
        session=agent_session,
        tool="read_file",
        input_normalized={"path": "a"},
        input_hash="h",
        risk_class="read",
        decision="ask",
        rule="r",
        reason="asked",
        review_status="approved",
        review_scope=ReviewScope.ONCE,
        reviewed_at=timezone.now(),
        **agent_session.axes.as_dict(),
    )
    reading, _ = session_read(session_id=agent_session.pk, point=DispatchPoint.BEFORE_TOOL)
    command_run(session=agent_session, text="/pause", actor=PERSON)
    stale: list[Any] = []
    the_gate = gate(agent_session, reading, tmp_path, stale)

    with pytest.raises(StaleReading):
        the_gate.check("read_file", {"path": "a"}, "h")

    approved.refresh_from_db()
    assert approved.used_at is None, "left for the call on a fresh reading"
    fresh, _ = session_read(session_id=agent_session.pk, point=DispatchPoint.BEFORE_TOOL)
    verdict = gate(agent_session, fresh, tmp_path, stale).check("read_file", {"path": "a"}, "h")
    assert verdict.rule == f"approved.once:{approved.pk}"
