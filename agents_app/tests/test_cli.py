"""``manage.py sf command|project|session`` — in-process and as a real subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings

from agents_app.models import AgentSession, ModeTransition, Project
from tests.cli import run_sf
from tests.processes import child_database_url

pytestmark = pytest.mark.django_db


def test_command_prints_the_resulting_axes(agent_session: AgentSession) -> None:
    code, out, _ = run_sf("command", "--session", str(agent_session.pk), "/mode build --autonomous")
    assert code == 0
    assert out.splitlines() == [
        "work_mode chat → build, run_control manual → autonomous: SF build | autonomous | normal | smart",
        "work_mode=build run_control=autonomous permission_profile=normal model_mode=smart surface=web",
    ]
    transition = ModeTransition.objects.get()
    assert (transition.actor_kind, transition.actor_label) == ("system", "cli")


def test_command_as_json(agent_session: AgentSession, user: object) -> None:
    code, out, _ = run_sf(
        "command",
        "--session",
        str(agent_session.pk),
        "--user",
        "ada",
        "--output-format",
        "json",
        "/steer model-mode deep after-current-unit",
    )
    data = json.loads(out)
    assert code == 0
    assert data["ok"] is True
    assert data["pending"] is True
    assert data["session"]["axes"]["model_mode"] == "smart"
    assert data["transition"]["to"]["model_mode"] == "deep"
    assert data["transition"]["actor"] == "ada"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["/sf mode build"], "/sf is not a command root"),
        (["/mode"], "/mode takes one value"),
        (["--user", "nobody", "/status"], "no user named 'nobody'"),
    ],
)
def test_a_rejected_command_exits_2_and_changes_nothing(
    agent_session: AgentSession, args: list[str], message: str
) -> None:
    code, out, err = run_sf("command", "--session", str(agent_session.pk), *args)
    assert code == 2
    assert err.startswith(f"error: {message}")
    assert out == ""
    assert ModeTransition.objects.count() == 0


def test_an_unknown_session_exits_2_with_json_error() -> None:
    code, out, _ = run_sf("command", "--session", "424242", "--output-format", "json", "/status")
    assert code == 2
    assert json.loads(out) == {"ok": False, "error": "no session with id 424242"}


def test_project_and_session_create(git_repo: Path) -> None:
    code, out, _ = run_sf("project", "create", "cli", str(git_repo), "--output-format", "json")
    project_id = json.loads(out)[0]["id"]
    assert code == 0
    code, out, _ = run_sf(
        "session",
        "create",
        "--project",
        str(project_id),
        "--work-mode",
        "plan",
        "--model-mode",
        "deep",
    )
    session = AgentSession.objects.get(project_id=project_id)
    assert out.strip() == f"session {session.pk}: SF plan | manual | normal | deep (active)"
    assert session.surface == "headless"


def test_project_create_with_a_bad_policy_exits_2(git_repo: Path) -> None:
    code, _, err = run_sf(
        "project", "create", "p", str(git_repo), "--policy", '{"repair_policy": 3}'
    )
    assert code == 2
    assert "repair_policy" in err
    assert Project.objects.count() == 0


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_the_real_command_line_exits_0_and_2(agent_session: AgentSession) -> None:
    env = {**os.environ, "DATABASE_URL": child_database_url("sf-cli-test")}
    manage = [sys.executable, str(Path(settings.BASE_DIR) / "manage.py"), "sf", "command"]
    ok = subprocess.run(
        [*manage, "--session", str(agent_session.pk), "--output-format", "json", "/trust trusted"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["session"]["axes"]["permission_profile"] == "trusted"
    bad = subprocess.run(
        [*manage, "--session", str(agent_session.pk), "/trust everyone"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert bad.returncode == 2
    assert bad.stderr.strip().startswith("error: unknown value 'everyone' for /trust")
    assert bad.stdout == ""
