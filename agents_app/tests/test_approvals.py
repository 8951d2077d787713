"""Risk decisions: approvals with scope once, session and project; who may review."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth.models import Permission, User
from django.test import Client
from django.urls import reverse

from agents_app.gate.approvals import decision_review
from agents_app.gate.session import SessionGate, input_hash
from agents_app.models import AgentSession, ApprovalRule, ReviewStatus, RiskDecision
from conftest import grant
from sf_core.errors import InvalidTransition, NotAllowed

pytestmark = pytest.mark.django_db
PUSH = {"command": "git push origin main", "cwd": None, "timeout_s": 120}


@pytest.fixture
def gate(agent_session: AgentSession, git_repo: Path) -> SessionGate:
    AgentSession.objects.filter(pk=agent_session.pk).update(
        run_control="autonomous", work_mode="build"
    )
    return SessionGate(session_id=agent_session.pk, worktree=git_repo)


def ask(gate: SessionGate, arguments: dict[str, object] = PUSH) -> RiskDecision:
    verdict = gate.check("run_command", arguments, input_hash("run_command", arguments))
    return RiskDecision.objects.get(pk=verdict.decision_id)


def test_an_ask_is_a_pending_decision_with_the_axes(gate: SessionGate) -> None:
    decision = ask(gate)
    assert decision.decision == "ask"
    assert decision.review_status == ReviewStatus.PENDING
    assert decision.permission_profile == "normal"
    assert decision.run_control == "autonomous"
    assert decision.input_hash == input_hash("run_command", PUSH)


def test_only_approvers_of_the_project_may_review(
    gate: SessionGate, staff_user: User, user: User, agent_session: AgentSession
) -> None:
    decision = ask(gate)
    grant(user, agent_session.project, "operator")
    # Staff with the old Django permission but no role is refused too.
    staff_user.user_permissions.add(Permission.objects.get(codename="review_riskdecision"))
    for person in (user, User.objects.get(pk=staff_user.pk)):
        with pytest.raises(NotAllowed, match="needs the approver role"):
            decision_review(decision=decision, reviewer=person, approve=True)
    decision.refresh_from_db()
    assert decision.review_status == ReviewStatus.PENDING


def test_approve_once_lets_exactly_that_call_through_once(
    gate: SessionGate, reviewer: User
) -> None:
    decision = ask(gate)
    decision_review(decision=decision, reviewer=reviewer, approve=True, scope="once")
    first = gate.check("run_command", PUSH, input_hash("run_command", PUSH))
    assert (first.decision, first.rule) == ("allow", f"approved.once:{decision.pk}")
    assert gate.check("run_command", PUSH, input_hash("run_command", PUSH)).decision == "ask"
    other = {**PUSH, "command": "git push origin other"}
    assert gate.check("run_command", other, input_hash("run_command", other)).decision == "ask"


def test_a_decision_is_reviewed_once(gate: SessionGate, reviewer: User) -> None:
    decision = ask(gate)
    decision_review(decision=decision, reviewer=reviewer, approve=False)
    with pytest.raises(InvalidTransition):
        decision_review(decision=decision, reviewer=reviewer, approve=True)
    decision.refresh_from_db()
    assert decision.review_status == ReviewStatus.REJECTED
    assert decision.reviewed_by == reviewer


@pytest.mark.parametrize("scope", ["session", "project"])
def test_session_and_project_scope_write_allow_rules(
    gate: SessionGate, reviewer: User, agent_session: AgentSession, scope: str
) -> None:
    decision = ask(gate)
    decision_review(decision=decision, reviewer=reviewer, approve=True, scope=scope)
    rule = ApprovalRule.objects.get()
    assert (rule.scope, rule.tool, rule.pattern) == (scope, "run_command", "git push origin main")
    assert (rule.session_id is not None) == (scope == "session")
    assert gate.check("run_command", PUSH, input_hash("run_command", PUSH)).decision == "allow"
    assert gate.check("run_command", PUSH, input_hash("run_command", PUSH)).decision == "allow"


def test_a_project_rule_reaches_later_sessions(
    gate: SessionGate, reviewer: User, agent_session: AgentSession, git_repo: Path
) -> None:
    decision_review(decision=ask(gate), reviewer=reviewer, approve=True, scope="project")
    later = AgentSession.objects.create(
        project=agent_session.project, run_control="autonomous", work_mode="build"
    )
    other_gate = SessionGate(session_id=later.pk, worktree=git_repo)
    assert (
        other_gate.check("run_command", PUSH, input_hash("run_command", PUSH)).decision == "allow"
    )


def test_the_approvals_page_reviews_inline(
    client: Client, gate: SessionGate, reviewer: User
) -> None:
    decision = ask(gate)
    client.force_login(reviewer)
    page = client.get(reverse("approvals")).content.decode()
    assert f'data-decision="{decision.pk}"' in page
    response = client.post(
        reverse("approval-review", args=[decision.pk]),
        {"action": "approve", "scope": "once"},
        HTTP_HX_REQUEST="true",
    )
    assert 'data-pending="0"' in response.content.decode()
    decision.refresh_from_db()
    assert decision.review_status == ReviewStatus.APPROVED


def test_a_non_reviewer_gets_403(
    client: Client, gate: SessionGate, user: User, agent_session: AgentSession
) -> None:
    decision = ask(gate)
    grant(user, agent_session.project, "operator")
    client.force_login(user)
    response = client.post(reverse("approval-review", args=[decision.pk]), {"action": "approve"})
    assert response.status_code == 403
    assert (
        "approving needs the approver role on the project"
        in client.get(reverse("approvals")).content.decode()
    )


def test_admin_filters_actions_and_read_only(admin_client: Client, gate: SessionGate) -> None:
    decision = ask(gate)
    listing = reverse("admin:agents_app_riskdecision_changelist")
    for query in (
        "?decision__exact=ask",
        "?review_status__exact=pending",
        "?tool=run_command",
        f"?q={decision.session_id}",
    ):
        page = admin_client.get(listing + query)
        assert page.status_code == 200
        assert f"/{decision.pk}/change/" in page.content.decode()
    admin_client.post(listing, {"action": "approve_session", "_selected_action": [decision.pk]})
    decision.refresh_from_db()
    assert (decision.review_status, decision.review_scope) == ("approved", "session")
    change = admin_client.get(
        reverse("admin:agents_app_riskdecision_change", args=[decision.pk])
    ).content.decode()
    assert 'name="rule"' not in change
    assert admin_client.get(reverse("admin:agents_app_riskdecision_add")).status_code == 403
