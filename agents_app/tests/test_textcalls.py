"""Tool calls written as text (the shapes Qwen2.5-Coder answered with, LOCAL_MODEL.md)."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from agents_app.models import AgentSession, TraceEvent
from agents_app.runtime.llm import ModelStep, ToolCallRequest
from agents_app.runtime.loop import NUDGE, Outcome
from agents_app.runtime.model_settings import ToolCallStyle
from agents_app.runtime.textcalls import recognise_step
from agents_app.runtime.tools import TOOLS
from agents_app.tests.runtime_helpers import ScriptedModel
from agents_app.tests.test_loop import build_session, make_loop  # noqa: F401 - fixture

OFFERED = list(TOOLS)
# Verbatim in form: what llama_cpp.server returned as `content` with tool_choice auto.
QWEN_FENCED = """```json
{
  "name": "write_file",
  "arguments": {
    "path": "hello.py",
    "content": "print('hello')\\n"
  }
}
```"""
QWEN_FINISH = '```json\n{"name": "finish", "arguments": {"summary": "hello.py prints hello"}}\n```'


def step(content: str, calls: list[ToolCallRequest] | None = None) -> ModelStep:
    return ModelStep(
        model="openai/qwen",
        content=content,
        tool_calls=calls or [],
        tokens_in=1,
        tokens_out=1,
        cost=Decimal(0),
        message={"role": "assistant", "content": content},
    )


def recognised(content: str) -> ModelStep:
    return recognise_step(step(content), TOOLS, OFFERED)


@pytest.mark.parametrize(
    "content",
    [
        QWEN_FENCED,
        "I'll create the file now.\n\n" + QWEN_FENCED + "\n\nThis writes hello.py.",
        '{"name": "write_file", "arguments": {"path": "hello.py", "content": "print(\'hello\')\\n"}}',
        '<tool_call>\n{"name": "write_file", "arguments": {"path": "hello.py", '
        '"content": "print(\'hello\')\\n"}}\n</tool_call>',
        # the OpenAI wire shape, arguments as a JSON string; and "parameters" for arguments
        '{"name": "write_file", "arguments": "{\\"path\\": \\"hello.py\\", '
        '\\"content\\": \\"print(\'hello\')\\\\n\\"}"}',
        '```\n{"name": "write_file", "parameters": {"path": "hello.py", '
        '"content": "print(\'hello\')\\n"}}\n```',
        QWEN_FENCED + "\n" + QWEN_FENCED,  # the same call twice is one call
    ],
)
def test_one_well_formed_call_in_the_text_becomes_a_structured_call(content: str) -> None:
    result = recognised(content)
    assert result.from_text
    assert not result.refusal
    [call] = result.tool_calls
    assert call.name == "write_file"
    assert call.id.startswith("call_")
    assert json.loads(call.arguments) == {"path": "hello.py", "content": "print('hello')\n"}
    assert result.message["tool_calls"][0]["id"] == call.id
    assert result.message is not None
    assert "write_file" not in (result.message["content"] or "")  # the call is not kept twice


@pytest.mark.parametrize(
    ("content", "refusal"),
    [
        (
            "Either\n" + QWEN_FENCED + "\nor, if it exists already,\n" + QWEN_FINISH,
            "2 different tool calls (finish, write_file)",
        ),
        ('```json\n{"name": "delete_repo", "arguments": {}}\n```', "unknown tool 'delete_repo'"),
        ('```json\n{"name": "write_file", "arguments": {"path": "a.py"}}\n```', "content: Field"),
        (
            '```json\n{"name": "write_file", "arguments": {"path": "a.py", "content": "x"\n```',
            "not valid JSON",
        ),
        ('{"name": "read_file", "arguments": ["a.py"]}', "must be a JSON object"),
    ],
)
def test_ambiguous_or_invalid_calls_are_refused_and_never_become_calls(
    content: str, refusal: str
) -> None:
    result = recognised(content)
    assert result.tool_calls == []
    assert not result.from_text
    assert refusal in result.refusal
    assert "was run" in result.refusal or "not valid JSON" in result.refusal


@pytest.mark.parametrize(
    "content",
    ["Done, the file is written.", 'A config looks like {"name": "x", "version": 2}.', ""],
)
def test_plain_text_and_json_that_is_not_a_call_are_left_alone(content: str) -> None:
    result = recognised(content)
    assert result == step(content)


def test_a_structured_call_is_taken_as_it_is() -> None:
    native = step(QWEN_FENCED, [ToolCallRequest("c1", "read_file", '{"path": "a"}')])
    assert recognise_step(native, TOOLS, OFFERED) is native


def test_a_hidden_tool_written_as_text_is_refused() -> None:
    result = recognise_step(step(QWEN_FINISH), TOOLS, ["read_file"])
    assert "unknown tool 'finish' (available: read_file)" in result.refusal


# --- through the agent loop -----------------------------------------------------------


def text_loop(session: AgentSession, worktree: Path, model: ScriptedModel, style: str) -> Any:
    loop = make_loop(session, worktree, model)
    loop.router.tool_calls = ToolCallStyle(style)
    return loop


@pytest.mark.django_db
def test_a_text_style_model_completes_a_unit_with_calls_written_as_json(
    build_session: AgentSession,  # noqa: F811
    git_repo: Path,
) -> None:
    model = ScriptedModel(("I'll write it.\n" + QWEN_FENCED, []), (QWEN_FINISH, []))
    result = text_loop(build_session, git_repo, model, "text").run(
        [{"role": "system", "content": "You are SF."}, {"role": "user", "content": "hello.py"}]
    )
    assert result.outcome == Outcome.FINISHED, result.detail
    assert (git_repo / "hello.py").read_text() == "print('hello')\n"
    sent = model.calls[1]
    assert sent["tools"]  # tools are still offered natively
    assert "exactly one JSON object" in sent["messages"][0]["content"]
    assistant, tool = sent["messages"][-2:]
    assert assistant["tool_calls"][0]["function"]["name"] == "write_file"
    assert tool == {
        "role": "tool",
        "tool_call_id": assistant["tool_calls"][0]["id"],
        "content": "wrote 15 bytes to hello.py",
    }
    recorded = TraceEvent.objects.filter(kind="model_step").order_by("seq").first()
    assert recorded is not None
    assert recorded.payload["tool_calls"][0]["name"] == "write_file"
    assert "recognised in the text" in recorded.payload["notes"][0]


@pytest.mark.django_db
def test_a_refused_text_call_is_answered_and_nothing_runs(
    build_session: AgentSession,  # noqa: F811
    git_repo: Path,
) -> None:
    two = "Either\n" + QWEN_FENCED + "\nor, if it exists already,\n" + QWEN_FINISH
    model = ScriptedModel((two, []), (two, []), (two, []))
    result = text_loop(build_session, git_repo, model, "text").run(
        [{"role": "user", "content": "hello.py"}]
    )
    assert result.outcome == Outcome.NO_PROGRESS
    assert "2 different tool calls" in result.detail
    assert not (git_repo / "hello.py").exists()
    assert "none was run" in model.calls[1]["messages"][-1]["content"]
    assert not TraceEvent.objects.filter(kind="tool_call").exists()


@pytest.mark.django_db
def test_native_style_never_runs_a_call_written_as_text(
    build_session: AgentSession,  # noqa: F811
    git_repo: Path,
) -> None:
    model = ScriptedModel((QWEN_FENCED, []), (QWEN_FENCED, []), (QWEN_FENCED, []))
    result = text_loop(build_session, git_repo, model, "native").run(
        [{"role": "user", "content": "hello.py"}]
    )
    assert result.outcome == Outcome.NO_PROGRESS
    assert not (git_repo / "hello.py").exists()
    assert model.calls[1]["messages"][-1]["content"] == NUDGE


# What Qwen2.5-Coder-1.5B wrote through SF on examples/plan.yaml (the first live run):
# a summary with its calls listed in order under "functions".
QWEN_SEQUENCE = """```json
{
    "summary": "The --shout flag now upper-cases the greeting.",
    "functions": [
        {"name": "run_command", "arguments": {"command": "python3 -m unittest -q", "cwd": "."}},
        {"name": "finish", "arguments": {"summary": "done"}}
    ]
}
```"""


@pytest.mark.parametrize(
    "content",
    [
        QWEN_SEQUENCE,
        '[{"name": "run_command", "arguments": {"command": "python3 -m unittest -q"}}, '
        '{"name": "finish", "arguments": {"summary": "done"}}]',
        '{"tool_calls": [{"type": "function", "function": {"name": "run_command", '
        '"arguments": "{\\"command\\": \\"python3 -m unittest -q\\"}"}}, '
        '{"type": "function", "function": {"name": "finish", "arguments": {"summary": "d"}}}]}',
        # one call per line, nothing else (Qwen2.5-Coder-1.5B, the second live run)
        '{"name": "run_command", "arguments": {"command": "python3 -m unittest -q"}}\n'
        '{"name": "finish", "arguments": {"summary": "done"}}',
        # the same in one fenced block (Qwen2.5-Coder-1.5B at temperature 0.7, recording
        # tests/fixtures/live/best_of.jsonl, 2026-11-28): refused as "Extra data" before
        '```json\n{"name": "run_command", "arguments": {"command": "python3 -m unittest -q"}}\n'
        '{"name": "finish", "arguments": {"summary": "Created farewell.py"}}\n```',
    ],
)
def test_calls_listed_in_order_run_the_first_and_say_the_rest_did_not(content: str) -> None:
    result = recognised(content)
    assert not result.refusal
    [call] = result.tool_calls
    assert call.name == "run_command"
    assert json.loads(call.arguments)["command"] == "python3 -m unittest -q"
    assert "Only your first call (run_command) was run" in result.note
    assert "(finish)" in result.note


def test_a_listed_first_call_that_does_not_fit_is_refused() -> None:
    content = '[{"name": "write_file", "arguments": {"path": "a"}}, {"name": "finish"}]'
    result = recognised(content)
    assert result.tool_calls == []
    assert "content: Field" in result.refusal


@pytest.mark.django_db
def test_the_loop_tells_the_model_which_listed_calls_did_not_run(
    build_session: AgentSession,  # noqa: F811
    git_repo: Path,
) -> None:
    listed = QWEN_SEQUENCE.replace(
        '"run_command", "arguments": {"command": "python3 -m unittest -q", "cwd": "."}',
        '"read_file", "arguments": {"path": "README.md"}',
    )
    model = ScriptedModel((listed, []), (QWEN_FINISH, []))
    result = text_loop(build_session, git_repo, model, "text").run(
        [{"role": "system", "content": "You are SF."}, {"role": "user", "content": "shout"}]
    )
    assert result.outcome == Outcome.FINISHED, result.detail
    tool_result = model.calls[1]["messages"][-1]
    assert tool_result["role"] == "tool"  # the note rides in the result, no user turn after it
    assert "# sample" in tool_result["content"]
    assert "Only your first call (read_file) was run" in tool_result["content"]
    # The unit page's trace says which ran and why the other did not, at that step.
    step = TraceEvent.objects.filter(kind="model_step").order_by("seq").first()
    assert step is not None
    assert (
        "tool call read_file recognised in the text; it was the first of 2 calls: finish not "
        "run (each call should see the result of the one before: the model was asked to send "
        "them one answer at a time)"
    ) in step.payload["notes"]


@pytest.mark.django_db
def test_no_progress_is_said_in_plain_words_not_in_the_models_text(
    build_session: AgentSession,  # noqa: F811
    git_repo: Path,
) -> None:
    prose = '```json\n{"summary": "All done.", "status": "complete"}\n```'
    model = ScriptedModel((prose, []), (prose, []), (prose, []))
    result = text_loop(build_session, git_repo, model, "text").run(
        [{"role": "user", "content": "hello.py"}]
    )
    assert result.outcome == Outcome.NO_PROGRESS
    assert result.detail == "3 answers in a row without a tool call that could run"
    assert "exactly one tool call as a JSON object" in model.calls[1]["messages"][-1]["content"]
