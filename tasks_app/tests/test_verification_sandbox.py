"""Verify commands: judged by the permission gate, run in the OS sandbox; and the
headless default profile. Real bubblewrap, real processes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agents_app.models import AgentSession, RiskDecision
from agents_app.runtime.sandbox import bwrap_problem
from agents_app.services import session_create
from sf_core.errors import CommandRejected
from tasks_app.engine.verification import verify
from tasks_app.features.headless.options import HeadlessOptions
from tasks_app.features.headless.session import session_resolve

pytestmark = pytest.mark.django_db
needs_bwrap = pytest.mark.skipif(
    bool(bwrap_problem("/usr/bin/bwrap")), reason="bubblewrap is required (scripts/setup.sh)"
)
REDIS_CONNECT = "import socket\nsocket.create_connection(('127.0.0.1', 6379), timeout=5)\n"


def _profile(session: AgentSession, profile: str) -> AgentSession:
    AgentSession.objects.filter(pk=session.pk).update(
        permission_profile=profile, run_control="autonomous", work_mode="build"
    )
    session.refresh_from_db()
    return session


def _script(repo: Path, name: str, body: str) -> str:
    """A script the gate lets a trusted session run (it cannot see what it does)."""
    (repo / name).write_text(body)
    return f"python3 {name}"


@needs_bwrap
def test_verify_commands_run_in_the_sandbox(
    agent_session: AgentSession, git_repo: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    session = _profile(agent_session, "trusted")
    leak = _script(git_repo, "leak.py", f"open({str(outside / 'leak.txt')!r}, 'w').write('x')\n")
    build = _script(git_repo, "build.py", "open('built.txt', 'w').write('ok')\n")
    connect = _script(git_repo, "connect.py", REDIS_CONNECT)
    result = verify(git_repo, [leak, build, connect], session_id=session.pk)
    assert [r.refused for r in result.results] == ["", "", ""]  # the gate let them all run
    [leaked, built, network] = result.results
    assert leaked.exit_code != 0  # /tmp is private: the directory is not even there
    assert not (outside / "leak.txt").exists()
    assert built.passed
    assert (git_repo / "built.txt").exists()
    assert not network.passed
    assert "Connection refused" in network.output
    assert not result.passed


@needs_bwrap
def test_the_project_egress_grant_is_the_proxy_and_never_the_hosts_loopback(
    agent_session: AgentSession, git_repo: Path
) -> None:
    project = agent_session.project
    project.policy = {**project.policy, "egress": ["pypi.org"]}
    project.save()
    session = _profile(agent_session, "trusted")
    connect = _script(git_repo, "connect.py", REDIS_CONNECT)
    proxy = _script(git_repo, "proxy.py", "import os\nassert os.environ['HTTPS_PROXY']\n")
    result = verify(git_repo, [proxy, connect], session_id=session.pk)
    [through_proxy, redis] = result.results
    assert through_proxy.passed  # the grant is there: a proxy to go through
    assert not redis.passed  # and SF's own Redis on loopback does not answer
    assert "Connection refused" in redis.output


def test_a_verify_command_the_gate_refuses_does_not_run(
    agent_session: AgentSession, git_repo: Path
) -> None:
    session = _profile(agent_session, "restricted")
    marker = git_repo / "ran.txt"
    result = verify(git_repo, [f"touch {marker.name}", "true"], session_id=session.pk)
    [refused, allowed] = result.results
    assert not marker.exists()
    assert refused.refused == "deny"
    assert not refused.passed
    assert "not run: the permission gate denies it" in refused.output
    assert "restricted profile does not allow it" in refused.output
    assert allowed.passed
    assert not result.passed
    assert "not run: the gate says deny" in result.report()
    decisions = RiskDecision.objects.filter(session=session).order_by("pk")
    assert [(d.decision, d.review_status) for d in decisions] == [
        ("deny", "not_needed"),
        ("allow", "not_needed"),
    ]
    assert decisions[0].reason.startswith("verify command: ")


def test_a_verify_command_the_gate_asks_about_does_not_run(
    agent_session: AgentSession, git_repo: Path
) -> None:
    session = _profile(agent_session, "normal")
    result = verify(git_repo, ["make test"], session_id=session.pk)
    assert result.results[0].refused == "ask"
    assert "the permission gate would ask a person first" in result.results[0].output
    assert not result.passed


def test_an_ask_runs_when_a_person_accepted_the_plan_and_is_stored_as_their_approval(
    agent_session: AgentSession, git_repo: Path, django_user_model: Any
) -> None:
    """They were shown the verify commands when they accepted the plan; a deny still
    refuses (restricted: denied whatever the acceptance)."""
    alice = django_user_model.objects.create_user("alice")
    session = _profile(agent_session, "normal")
    (git_repo / "test_ok.py").write_text(
        "import unittest\n\nclass T(unittest.TestCase):\n    def test_ok(self):\n        pass\n"
    )
    command = "python3 -m unittest -q"
    result = verify(git_repo, [command], session_id=session.pk, accepted_by=alice)
    assert result.passed, result.report()
    decision = RiskDecision.objects.get(session=session)
    assert (decision.decision, decision.review_status) == ("ask", "approved")
    assert decision.reviewed_by == alice
    assert decision.reviewed_at is not None
    _profile(session, "restricted")
    denied = verify(git_repo, ["touch x.txt"], session_id=session.pk, accepted_by=alice)
    assert denied.results[0].refused == "deny"
    assert not (git_repo / "x.txt").exists()


# --- profiles above normal without the sandbox --------------------------------------------


def test_profiles_above_restricted_are_refused_without_the_sandbox(
    project: Any, settings: Any, tmp_path: Path
) -> None:
    settings.SF_SANDBOX_BWRAP = str(tmp_path / "no-bwrap")
    for profile in ("normal", "trusted", "unrestricted"):
        with pytest.raises(CommandRejected, match=f"the {profile} profile needs the OS sandbox"):
            session_create(project=project, axes={"permission_profile": profile})
    assert session_create(project=project, axes={"permission_profile": "restricted"}).pk


def test_sf_sandbox_off_allows_every_profile(project: Any, settings: Any, tmp_path: Path) -> None:
    settings.SF_SANDBOX_BWRAP = str(tmp_path / "no-bwrap")
    settings.SF_SANDBOX = "off"
    session = session_create(project=project, axes={"permission_profile": "unrestricted"})
    assert session.permission_profile == "unrestricted"


def test_a_trusted_verify_is_refused_when_the_sandbox_went_away(
    agent_session: AgentSession, git_repo: Path, settings: Any, tmp_path: Path
) -> None:
    session = _profile(agent_session, "trusted")
    settings.SF_SANDBOX_BWRAP = str(tmp_path / "no-bwrap")
    result = verify(git_repo, ["touch ran.txt"], session_id=session.pk)
    assert not result.passed
    assert "needs the OS sandbox" in result.results[0].output
    assert not (git_repo / "ran.txt").exists()


# --- headless ---------------------------------------------------------------------------


def test_a_new_headless_session_is_read_only_by_default(git_repo: Path) -> None:
    session, resumed = session_resolve(HeadlessOptions(project=git_repo, intent="look around"))
    assert not resumed
    assert session.permission_profile == "restricted"


def test_a_headless_profile_given_explicitly_is_kept(git_repo: Path) -> None:
    options = HeadlessOptions(project=git_repo, intent="build", permission_profile="trusted")
    session, _ = session_resolve(options)
    assert session.permission_profile == "trusted"
