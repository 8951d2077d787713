"""A real model calls an MCP tool (``-m live_model``): the project's policy starts the
test MCP server (tests/mcp_test_server.py) with each unit, in its sandbox; the task
needs a fact only the tracker holds (its items are in a folder the agent's own tools
cannot reach), so the model must call ``mcp__tracker__lookup``, through the gate.

A 1.5B model may still fail the task (write the wrong text, or finish early). What must
hold: in one of the runs the model called the tool and it was allowed and answered,
every run ended cleanly, and no server process outlived its unit. The second run (only
if the first did not call the tool) samples at a temperature above 0, or it would
repeat the first.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agents_app.models import RiskDecision, TraceEvent
from agents_app.services import project_create
from agents_app.tests.mcp_helpers import (
    SERVER_FILE,
    SERVER_SOURCE,
    alive,
    marker,
    server_policy,
)
from tests.headless_runs import headless
from tests.live.conftest import LocalModel
from tests.live.test_live_model import RETRY_TEMPERATURE, TIMEOUT, assert_ended_cleanly
from tests.live.unattended import BOUNDS, answers_write, repo_make

pytestmark = [pytest.mark.live_model, pytest.mark.slow, pytest.mark.django_db(transaction=True)]
RUNS = 2
# The tool call is the first step: few steps, but time for it on a busy machine (here, two
# cores under a load of 8 to 14, the model wrote 0.2 tokens a second).
LIMITS = {**BOUNDS, "SF_UNIT_MAX_STEPS": "4", "SF_UNIT_HARD_TIMEOUT": "600s"}
PLAN = """summary: The release codename
intent: Record the release codename the tracker holds.
tasks:
  - key: codename
    title: Write the release codename from the tracker into codename.txt
    description: >-
      The release codename is kept in the issue tracker, item "release". Call the tool
      mcp__tracker__lookup with key "release" to read it, then write the codename alone
      into codename.txt.
    acceptance_criteria:
      - codename.txt holds the codename of tracker item release
    verify:
      - grep -qi bluebird codename.txt
    risk_level: low
    max_retries: 0
"""


def test_a_real_model_calls_an_mcp_tool_through_the_gate(
    local_model: LocalModel, tmp_path: Path
) -> None:
    items = tmp_path / "tracker-items"
    items.mkdir()
    (items / "release.txt").write_text("codename BLUEBIRD")
    called = False
    for attempt in range(1, RUNS + 1):
        word = marker()
        repo = repo_make(
            {"README.md": "# notes\n", SERVER_FILE: SERVER_SOURCE.read_text()},
            tmp_path / f"codename-{attempt}",
        )
        server = server_policy(word, tools={"lookup": "read"})
        server["args"] += ["--items", str(items), "--only", "lookup"]
        server["expose"] = [*server["expose"], str(items)]
        project_create(
            name=f"codename-{attempt}",
            repo_path=str(repo.resolve()),
            policy={"mcp": {"servers": {"tracker": server}}},
        )
        plan = tmp_path / f"plan-{attempt}.yaml"
        plan.write_text(PLAN)
        run = headless(
            "--project", str(repo), "--plan-file", str(plan), "--autonomous",
            "--permission-profile", "normal", "--output-format", "json",
            "--answers", str(answers_write(repo)),
            timeout=TIMEOUT + 600, **LIMITS,
            **local_model.environment(0.0 if attempt == 1 else RETRY_TEMPERATURE),
        )  # fmt: skip
        session = assert_ended_cleanly(run, repo)
        assert not alive(word), "an MCP server outlived its unit"
        lookups = TraceEvent.objects.filter(
            unit__task__plan__session=session, kind="tool_call", name="mcp__tracker__lookup"
        )
        if any("BLUEBIRD" in str(e.payload.get("output", "")) for e in lookups):
            called = True
            break
    assert called, f"the model never called the MCP tool in {RUNS} runs:\n{run.stderr[-3000:]}"
    decision = RiskDecision.objects.filter(session=session, tool="mcp__tracker__lookup").first()
    assert decision is not None
    assert (decision.decision, decision.risk_class) == ("allow", "mcp-read")
