"""The agent loop with the real gate, trace and tools; the model is scripted."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from agents_app.gate.session import SessionGate
from agents_app.models import AgentSession, Decision, ReviewStatus, RiskDecision, TraceEvent
from agents_app.runtime.llm import ModelRouter
from agents_app.runtime.loop import AgentLoop, Outcome
from agents_app.runtime.recording import trace_from_steps
from agents_app.runtime.replay import Replay, ReplayMiss
from agents_app.runtime.tools import TOOLS, ToolContext
from agents_app.runtime.trace import TraceRecorder
from agents_app.tests.runtime_helpers import NullHooks, ScriptedModel

pytestmark = pytest.mark.django_db
FINISH = ("done", [("finish", {"summary": "all good"})])


@pytest.fixture
def build_session(agent_session: AgentSession) -> AgentSession:
    """build | autonomous | normal | smart (manual run control would ask for every write)."""
    AgentSession.objects.filter(pk=agent_session.pk).update(
        work_mode="build", run_control="autonomous"
    )
    agent_session.refresh_from_db()
    return agent_session


def make_loop(
    session: AgentSession, worktree: Path, model: ScriptedModel, **extra: Any
) -> AgentLoop:
    return AgentLoop(
        router=ModelRouter(model="openai/gpt-4o", completion=model, sleep=lambda s: None),
        tools=TOOLS,
        context=ToolContext(worktree=worktree),
        gate=SessionGate(session_id=session.pk, worktree=worktree),
        recorder=TraceRecorder(session=session),
        hooks=NullHooks(),
        **extra,
    )


def test_it_runs_tools_until_finish(build_session: AgentSession, git_repo: Path) -> None:
    model = ScriptedModel(
        ("look", [("read_file", {"path": "README.md"})]),
        ("write", [("write_file", {"path": "NOTES.md", "content": "hello\n"})]),
        FINISH,
        cost=0.002,
    )
    result = make_loop(build_session, git_repo, model).run([{"role": "user", "content": "go"}])
    assert result.outcome == Outcome.FINISHED
    assert result.summary == "all good"
    assert result.steps == 3
    assert result.tokens_in == 150
    assert result.cost == Decimal("0.006")
    assert (git_repo / "NOTES.md").read_text() == "hello\n"
    kinds = list(TraceEvent.objects.order_by("seq").values_list("kind", "name"))
    assert kinds == [
        ("model_step", "openai/gpt-4o"),
        ("tool_call", "read_file"),
        ("model_step", "openai/gpt-4o"),
        ("tool_call", "write_file"),
        ("model_step", "openai/gpt-4o"),
        ("tool_call", "finish"),
    ]
    read = TraceEvent.objects.get(name="read_file")
    assert "# sample" in read.payload["output"]
    assert len(read.input_hash) == 64
    assert model.calls[1]["messages"][-1]["role"] == "tool"  # the result went back to the model


def test_malformed_calls_are_answered_not_crashed(
    build_session: AgentSession, git_repo: Path
) -> None:
    model = ScriptedModel(
        ("oops", [("read_file", {"lines": 3})]),
        ("oops again", [("read_file", "{not json")]),
        ("unknown", [("delete_everything", {})]),
        FINISH,
    )
    result = make_loop(build_session, git_repo, model).run([{"role": "user", "content": "go"}])
    assert result.outcome == Outcome.FINISHED
    answers = [m["content"] for m in model.calls[3]["messages"] if m["role"] == "tool"]
    assert answers[0].startswith("invalid arguments for read_file: path: Field required")
    assert "lines: Extra inputs are not permitted" in answers[0]
    assert answers[1].startswith("invalid arguments for read_file: Expecting property name")
    assert answers[2].startswith("unknown tool 'delete_everything'; available: ")


def test_a_denied_call_is_recorded_with_all_five_axes(
    build_session: AgentSession, git_repo: Path
) -> None:
    model = ScriptedModel(("clean", [("run_command", {"command": "rm -rf /"})]), FINISH)
    result = make_loop(build_session, git_repo, model).run([{"role": "user", "content": "go"}])
    assert result.outcome == Outcome.FINISHED
    decision = RiskDecision.objects.get(tool="run_command")
    assert decision.decision == Decision.DENY
    assert decision.review_status == ReviewStatus.NOT_NEEDED
    assert (
        decision.work_mode,
        decision.run_control,
        decision.permission_profile,
        decision.model_mode,
        decision.surface,
    ) == (
        "build",
        "autonomous",
        "normal",
        "smart",
        "web",
    )
    assert decision.input_normalized == {"command": "rm -rf /", "cwd": None, "timeout_s": 120}
    tool_answer = next(m for m in model.calls[1]["messages"] if m["role"] == "tool")["content"]
    assert tool_answer.startswith(f"denied by {decision.rule}")


def test_an_ask_blocks_the_loop_with_a_pending_decision(
    build_session: AgentSession, git_repo: Path
) -> None:
    model = ScriptedModel(
        ("ship it", [("run_command", {"command": "git push origin main"})]), FINISH
    )
    result = make_loop(build_session, git_repo, model).run([{"role": "user", "content": "go"}])
    assert result.outcome == Outcome.BLOCKED
    decision = RiskDecision.objects.get(pk=result.decision_id)
    assert decision.decision == Decision.ASK
    assert decision.review_status == ReviewStatus.PENDING
    assert len(model.steps) == 1, "the loop stopped before asking the model again"


def test_the_step_limit_stops_the_loop(build_session: AgentSession, git_repo: Path) -> None:
    model = ScriptedModel(*[("again", [("list_dir", {"path": "."})])] * 5)
    result = make_loop(build_session, git_repo, model, max_steps=3).run(
        [{"role": "user", "content": "go"}]
    )
    assert result.outcome == Outcome.STEP_LIMIT
    assert result.steps == 3


def test_the_budget_stops_the_loop(build_session: AgentSession, git_repo: Path) -> None:
    model = ScriptedModel(*[("again", [("list_dir", {"path": "."})])] * 5, cost=0.01)
    loop = make_loop(build_session, git_repo, model, budget=Decimal("0.025"))
    result = loop.run([{"role": "user", "content": "go"}])
    assert result.outcome == Outcome.BUDGET
    assert result.steps == 3


def test_answers_without_tools_are_nudged_then_stopped(
    build_session: AgentSession, git_repo: Path
) -> None:
    model = ScriptedModel(("thinking", []), ("still thinking", []), ("hmm", []))
    result = make_loop(build_session, git_repo, model).run([{"role": "user", "content": "go"}])
    assert result.outcome == Outcome.NO_PROGRESS
    assert "call finish" in model.calls[1]["messages"][-1]["content"]


def test_a_replay_miss_stops_before_the_call_runs(
    build_session: AgentSession, git_repo: Path
) -> None:
    recorded = trace_from_steps(
        [("write", [("write_file", {"path": "a.txt", "content": "recorded"})])],
        header={},
        worktree=git_repo,
    )
    replay = Replay(
        header=recorded[0],
        model_steps=[],
        tool_calls=[r for r in recorded if r["type"] == "tool_call"],
    )
    model = ScriptedModel(("write", [("write_file", {"path": "a.txt", "content": "changed"})]))
    with pytest.raises(ReplayMiss, match="tool call #1 differs from the recording"):
        make_loop(build_session, git_repo, model, replay=replay).run(
            [{"role": "user", "content": "go"}]
        )
    assert not (git_repo / "a.txt").exists()


def test_manual_run_control_asks_for_every_side_effect(
    agent_session: AgentSession, git_repo: Path
) -> None:
    model = ScriptedModel(("write", [("write_file", {"path": "x.txt", "content": "x"})]), FINISH)
    result = make_loop(agent_session, git_repo, model).run([{"role": "user", "content": "go"}])
    assert result.outcome == Outcome.BLOCKED
    assert not (git_repo / "x.txt").exists()


def test_a_free_model_is_never_over_a_budget_of_nothing(
    build_session: AgentSession, git_repo: Path
) -> None:
    """A local model costs $0: a task budget of $0 (a small model planned one) must not
    end every unit after its first step."""
    model = ScriptedModel(
        ("look", [("list_dir", {"path": "."})]), ("x", [("finish", {"summary": "s"})])
    )
    loop = make_loop(build_session, git_repo, model, budget=Decimal("0"))
    result = loop.run([{"role": "user", "content": "go"}])
    assert result.outcome == Outcome.FINISHED
