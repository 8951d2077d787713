"""One journey through the API alone, as a client would drive SF: register a repository,
open a session, upload the demo trace's plan, run it autonomously, watch it merge.
The units run inline from the recorded trace (no model), as ``sf replay`` runs them."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from django.contrib.auth.models import User

from agents_app.models import AgentSession
from agents_app.runtime.replay import replay_load
from api_app.tests.conftest import Api
from tasks_app.engine.drain import drain
from tasks_app.engine.replaying import demo_repo_create
from tasks_app.engine.unit import UnitOptions
from tasks_app.replays import recorded_profile
from tests.fixtures import HANDWRITTEN_DEMO_TRACE

pytestmark = pytest.mark.django_db


def test_a_repository_becomes_merged_code_through_the_api(
    api: Api, registrar: User, tmp_path: Path
) -> None:
    repo = demo_repo_create(tmp_path / "greet")
    project = api.post("/projects", {"name": "greet", "repo_path": str(repo)}, key="p").json()
    session = api.post("/sessions", {"project_id": project["id"], "title": "shout"}, key="s").json()
    replay = replay_load(HANDWRITTEN_DEMO_TRACE)
    # The units answer from the recorded trace and run in this test (the inline driver
    # of headless and replay); neither is a field a client sets.
    AgentSession.objects.filter(pk=session["id"]).update(
        replay_trace=str(HANDWRITTEN_DEMO_TRACE), driver="inline"
    )
    plan_yaml = str(replay.header["plan_yaml"])
    plan = api.post(
        f"/sessions/{session['id']}/plans", {"name": "plan.yaml", "content": plan_yaml}
    ).json()
    accepted = api.post(
        f"/plans/{plan['id']}/accept",
        {"autonomous": True, "permission_profile": recorded_profile(replay.header) or None},
    )
    assert accepted.status_code == 200, accepted.content
    ran = drain(session_id=session["id"], worker="test", options=UnitOptions(replay=replay))
    assert ran == 1
    tasks = api.get(f"/sessions/{session['id']}/tasks").json()["items"]
    assert [(t["key"], t["status"]) for t in tasks] == [("shout-flag", "done")]
    assert "merged as" in tasks[0]["status_reason"]
    log = subprocess.run(
        ["git", "log", "--format=%s", "-1"], cwd=repo, capture_output=True, text=True
    ).stdout
    assert log.startswith("sf: merge shout-flag")
    snapshot = api.get(f"/sessions/{session['id']}/snapshot").json()
    assert snapshot["session"]["id"] == session["id"]
