"""The one recorder of the gate's decision on a command SF runs for a session (a verify
command, a project hook): the row it leaves for each decision, and who approved it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agents_app.gate.judged import command_judged, refusal
from agents_app.gate.normalize import normalize_input
from agents_app.gate.schemas import ToolCall
from agents_app.gate.session import input_hash
from agents_app.models import AgentSession, RiskDecision

pytestmark = pytest.mark.django_db


def _profile(session: AgentSession, profile: str) -> AgentSession:
    AgentSession.objects.filter(pk=session.pk).update(permission_profile=profile)
    session.refresh_from_db()
    return session


def test_each_decision_is_one_row_approved_only_by_a_person_named_for_an_ask(
    agent_session: AgentSession,
    git_repo: Path,
    django_user_model: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SF_SECRET_APP_TOKEN", "hush-hush-1234")
    alice = django_user_model.objects.create_user("alice")
    normal = _profile(agent_session, "normal")
    asked = command_judged(normal, "make test", worktree=git_repo, unit_id=None, why="hook x")
    approved = command_judged(
        normal,
        "make test TOKEN=hush-hush-1234",
        worktree=git_repo,
        unit_id=None,
        why="verify command",
        approved_by=alice,
        approval_note="accepted the plan",
    )
    restricted = _profile(agent_session, "restricted")
    denied = command_judged(
        restricted, "touch x", worktree=git_repo, unit_id=None, why="verify command"
    )
    assert [v.decision for v in (asked, approved, denied)] == ["ask", "ask", "deny"]
    assert refusal(asked).startswith("the permission gate would ask a person first (")
    assert refusal(denied).startswith("the permission gate denies it (")
    rows = list(RiskDecision.objects.filter(session=agent_session).order_by("pk"))
    assert [(r.decision, r.review_status, r.reviewed_by) for r in rows] == [
        ("ask", "not_needed", None),
        ("ask", "approved", alice),
        ("deny", "not_needed", None),
    ]
    assert rows[0].reason == f"hook x: {asked.reason}"
    assert rows[1].review_note == "accepted the plan"
    assert rows[1].reviewed_at is not None
    assert "hush-hush-1234" not in str(rows[1].input_normalized)  # redacted
    assert rows[2].permission_profile == "restricted"  # the session's axes then
    assert all(r.tool == "run_command" for r in rows)
    normalized = normalize_input(
        ToolCall(tool="run_command", input={"command": "touch x"}), git_repo
    )
    assert rows[2].input_hash == input_hash("run_command", normalized)
