"""A reviewer's approval is never a wildcard: it matches the exact call the reviewer
saw, or a declared command family (`pytest …`) the reviewer was shown and chose."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from agents_app.gate.approvals import decision_family, decision_review
from agents_app.gate.policy import decide
from agents_app.gate.schemas import Rule
from agents_app.gate.session import SessionGate, input_hash
from agents_app.models import AgentSession, ApprovalRule, RiskDecision
from agents_app.tests.gate_helpers import context, gate_worktree, shell
from sf_core.errors import SfError


@pytest.fixture
def gate(agent_session: AgentSession, git_repo: Path) -> SessionGate:
    AgentSession.objects.filter(pk=agent_session.pk).update(
        run_control="autonomous", work_mode="build", permission_profile="normal"
    )
    return SessionGate(session_id=agent_session.pk, worktree=git_repo)


def check(gate: SessionGate, command: str) -> str:
    arguments = {"command": command}
    return gate.check("run_command", arguments, input_hash("run_command", arguments)).decision


def asked(gate: SessionGate, command: str) -> RiskDecision:
    arguments = {"command": command}
    verdict = gate.check("run_command", arguments, input_hash("run_command", arguments))
    assert verdict.decision == "ask", verdict
    return RiskDecision.objects.get(pk=verdict.decision_id)


# -- exact approvals: a `*` in an approved command is a `*` --------------------------------------


@pytest.mark.django_db
def test_an_approved_push_with_a_star_does_not_let_a_force_push_through(
    gate: SessionGate, reviewer: User
) -> None:
    decision = asked(gate, "git push origin sf/*")
    decision_review(decision=decision, reviewer=reviewer, approve=True, scope="session")
    rule = ApprovalRule.objects.get()
    assert (rule.match, rule.pattern) == ("exact", "git push origin sf/*")
    assert check(gate, "git push origin sf/x main --force") == "ask"
    assert check(gate, "git push origin sf/x") == "ask"
    assert check(gate, "git  push origin  sf/*") == "allow"  # the same call, normalized


def test_an_approved_delete_with_a_star_does_not_reach_git(tmp_path: Path) -> None:
    worktree = gate_worktree(tmp_path)
    for match in ("exact", "glob"):  # "glob": a rule stored before approvals were literal
        approved = [Rule(tool="run_command", pattern="rm -rf build/*", match=match)]
        ctx = context(worktree, "normal", approved_rules=approved)
        decision = decide(shell("rm -rf build/../.git"), ctx)
        assert decision.decision == "ask", (match, decision)
        assert decision.rule == "harness.destructive.recursive-delete"


def test_an_exact_approval_is_for_the_directory_it_was_seen_in(tmp_path: Path) -> None:
    worktree = gate_worktree(tmp_path)
    approved = [Rule(tool="run_command", pattern="git push origin main", match="exact")]
    ctx = context(worktree, "normal", approved_rules=approved)
    assert decide(shell("git push origin main"), ctx).decision == "allow"
    elsewhere = shell("git push origin main")
    elsewhere.input["cwd"] = "/tmp"
    assert decide(elsewhere, ctx).decision == "ask"


@pytest.mark.django_db
def test_rules_stored_before_families_are_read_literally(
    gate: SessionGate, agent_session: AgentSession
) -> None:
    ApprovalRule.objects.create(
        project=agent_session.project,
        scope="project",
        tool="run_command",
        pattern="git push origin sf/*",
    )
    assert ApprovalRule.objects.get().match == "exact"  # the migration's default
    assert check(gate, "git push origin sf/x main --force") == "ask"
    assert check(gate, "git push origin sf/*") == "allow"


# -- family approvals: chosen by the reviewer, only that family's profile ask -------------------


@pytest.mark.django_db
def test_a_family_approval_allows_that_family_and_nothing_more(
    gate: SessionGate, reviewer: User
) -> None:
    decision = asked(gate, "pytest -q tests/test_app.py")
    assert decision_family(decision) == "pytest"
    decision_review(
        decision=decision, reviewer=reviewer, approve=True, scope="project", match="family"
    )
    rule = ApprovalRule.objects.get()
    assert (rule.match, rule.pattern, rule.scope) == ("family", "pytest", "project")
    assert str(rule) == "allow run_command pytest … (project)"
    assert check(gate, "pytest -x -k parser") == "allow"
    assert check(gate, "FOO=1 pytest -q") == "allow"
    assert check(gate, "cd src && pytest") == "allow"
    assert check(gate, "LD_PRELOAD=/tmp/evil.so pytest") == "ask"
    assert check(gate, "pytest -q && rm -rf .git") == "ask"
    assert check(gate, "pytest /etc/passwd") == "ask"
    assert check(gate, "ruff check .") == "ask"
    assert check(gate, "python -m pytest") == "ask"  # another family: python -m pytest


@pytest.mark.django_db
def test_a_family_is_offered_only_where_there_is_one(gate: SessionGate, reviewer: User) -> None:
    push = asked(gate, "git push origin main")
    assert decision_family(push) == ""
    with pytest.raises(SfError, match="no command family"):
        decision_review(
            decision=push, reviewer=reviewer, approve=True, scope="session", match="family"
        )
    tests = asked(gate, "npm test")
    assert decision_family(tests) == "npm test"
    with pytest.raises(SfError, match="not once"):
        decision_review(decision=tests, reviewer=reviewer, approve=True, match="family")
    with pytest.raises(SfError, match="unknown match"):
        decision_review(decision=tests, reviewer=reviewer, approve=True, match="glob")
    assert ApprovalRule.objects.count() == 0


@pytest.mark.django_db
def test_the_approvals_page_shows_the_family_and_grants_it(
    client: Client, gate: SessionGate, reviewer: User
) -> None:
    decision = asked(gate, "pytest -q")
    push = asked(gate, "git push origin main")
    client.force_login(reviewer)
    page = client.get(reverse("approvals")).content.decode()
    assert 'data-family="pytest"' in page
    assert "any “pytest …” command" in page
    assert page.count("data-family=") == 1  # the push has no family to offer
    response = client.post(
        reverse("approval-review", args=[decision.pk]),
        {"action": "approve", "scope": "session", "match": "family"},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 200
    assert ApprovalRule.objects.get().match == "family"
    assert check(gate, "pytest -k other") == "allow"
    bad = client.post(
        reverse("approval-review", args=[push.pk]),
        {"action": "approve", "scope": "session", "match": "family"},
    )
    assert bad.status_code == 409
    assert "no command family" in bad.content.decode()
