"""``sf headless`` with an MCP server in the project's policy, in a real subprocess: a
replayed unit calls the server's tool (executed for real, matched by name and input
hash), the run ends with its result, and the process exits with no server left."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from agents_app.models import RiskDecision
from agents_app.services import project_create
from agents_app.tests.mcp_helpers import alive, install_server, marker, server_policy
from tasks_app.engine.replaying import demo_repo_create
from tests.headless_runs import FINISH, headless, make_trace, new_run, plan_yaml

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def test_a_replayed_mcp_call_runs_for_real_and_headless_exits_cleanly(tmp_path: Path) -> None:
    repo = demo_repo_create(tmp_path / "repo")
    install_server(repo)
    for args in (
        ["add", "-A"],
        ["-c", "user.name=t", "-c", "user.email=t@x", "commit", "-qm", "mcp"],
    ):
        subprocess.run(["git", *args], cwd=repo, check=True)
    word = marker()
    server = server_policy(word, tools={"create_item": "write"})
    project_create(
        name="mcp", repo_path=str(repo.resolve()), policy={"mcp": {"servers": {"tracker": server}}}
    )
    create = ("filing", [("mcp__tracker__create_item", {"name": "a1", "body": "open"})])
    trace = make_trace(tmp_path, [create, FINISH], plan_yaml("file", verify="test -f items/a1.txt"))
    started = time.monotonic()
    run = headless(*new_run(repo, trace), "--output-format", "json", timeout=300)
    took = time.monotonic() - started
    assert run.code == 0, run.stderr[-3000:]
    assert run.result().tasks[0].status == "done"
    assert (repo / "items" / "a1.txt").read_text() == "open"  # merged
    decision = RiskDecision.objects.get(tool="mcp__tracker__create_item")
    assert (decision.decision, decision.risk_class) == ("allow", "mcp-write")
    assert not alive(word)
    assert took < 120, f"headless took {took:.0f} s"
