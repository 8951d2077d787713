"""Calls a small model writes sloppily: read as meant when unambiguous, else answered
with what would make them run, and not counted as answers without any call."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agents_app.models import AgentSession
from agents_app.runtime.loop import EXAMPLE_CALLS, Outcome
from agents_app.tests.runtime_helpers import ScriptedModel
from agents_app.tests.test_loop import build_session  # noqa: F401 - fixture
from agents_app.tests.test_textcalls import QWEN_FINISH, recognised, text_loop

FENCE = "```json\n{}\n```"


@pytest.mark.parametrize(
    "content",
    [
        # Python's literals in otherwise JSON (Qwen2.5-Coder-1.5B wrote `False`)
        FENCE.format(
            '{"name": "grep", "arguments": {"pattern": "None", "fixed": False, '
            '"ignore_case": True}}'
        ),
        '{"name": "grep", "arguments": {"pattern": "None", "fixed": False, "ignore_case": True}}',
        # a Python dict literal
        "Searching:\n{'name': 'grep', 'arguments': {'pattern': 'None', 'fixed': False, "
        "'ignore_case': True}}",
    ],
)
def test_python_literals_in_a_call_are_read_as_json_and_strings_keep_them(content: str) -> None:
    result = recognised(content)
    assert not result.refusal, result.refusal
    [call] = result.tool_calls
    assert call.name == "grep"
    assert json.loads(call.arguments) == {"pattern": "None", "fixed": False, "ignore_case": True}


def test_a_missing_argument_is_answered_with_the_parameters_and_the_call_written_right() -> None:
    result = recognised(FENCE.format('{"name": "edit_file", "arguments": {"search": "x = 1"}}'))
    assert result.tool_calls == []
    assert result.correctable
    assert "path: Field required" in result.refusal
    assert "edit_file takes (path: string, search: string, replace: string)" in result.refusal
    example = result.refusal.rsplit("For example:\n", 1)[1]
    assert json.loads(example) == {
        "name": "edit_file",
        "arguments": {"search": "x = 1", "path": "<path>", "replace": "<replace>"},
    }


def test_an_unknown_tool_is_answered_with_the_tools() -> None:
    result = recognised(FENCE.format('{"name": "create_file", "arguments": {"path": "a"}}'))
    assert result.correctable
    assert "unknown tool 'create_file' (available: read_file, write_file, edit_file" in (
        result.refusal
    )


MISSING_PATH = FENCE.format('{"name": "write_file", "arguments": {"content": "print(1)\\n"}}')
WRITE = FENCE.format('{"name": "write_file", "arguments": {"path": "a.py", "content": "x\\n"}}')


@pytest.mark.django_db
def test_a_model_correcting_its_calls_is_not_ended_by_the_three_answers_rule(
    build_session: AgentSession,  # noqa: F811
    git_repo: Path,
) -> None:
    model = ScriptedModel(*[(MISSING_PATH, [])] * 3, (WRITE, []), (QWEN_FINISH, []))
    result = text_loop(build_session, git_repo, model, "text").run(
        [{"role": "user", "content": "a.py"}]
    )
    assert result.outcome == Outcome.FINISHED, result.detail
    assert (git_repo / "a.py").read_text() == "x\n"
    told = model.calls[1]["messages"][-1]["content"]
    assert '"path": "<path>"' in told


@pytest.mark.django_db
def test_calls_that_never_get_right_still_end_the_unit(
    build_session: AgentSession,  # noqa: F811
    git_repo: Path,
) -> None:
    model = ScriptedModel(*[(MISSING_PATH, [])] * 6)
    result = text_loop(build_session, git_repo, model, "text").run(
        [{"role": "user", "content": "a.py"}]
    )
    assert result.outcome == Outcome.NO_PROGRESS
    assert result.detail.startswith("6 answers in a row without a tool call that could run")


@pytest.mark.django_db
def test_the_last_prose_answer_before_giving_up_is_shown_a_call_written_right(
    build_session: AgentSession,  # noqa: F811
    git_repo: Path,
) -> None:
    model = ScriptedModel(("I will edit it.", []), ("Editing now.", []), (QWEN_FINISH, []))
    result = text_loop(build_session, git_repo, model, "text").run(
        [{"role": "user", "content": "a.py"}]
    )
    assert result.outcome == Outcome.FINISHED
    assert EXAMPLE_CALLS not in model.calls[1]["messages"][-1]["content"]
    assert EXAMPLE_CALLS in model.calls[2]["messages"][-1]["content"]


@pytest.mark.django_db
def test_a_native_call_missing_an_argument_is_answered_with_an_example(
    build_session: AgentSession,  # noqa: F811
    git_repo: Path,
) -> None:
    model = ScriptedModel(("", [("read_file", {})]), ("", [("finish", {"summary": "s"})]))
    result = text_loop(build_session, git_repo, model, "native").run(
        [{"role": "user", "content": "read"}]
    )
    assert result.outcome == Outcome.FINISHED
    answer = model.calls[1]["messages"][-1]
    assert answer["role"] == "tool"
    assert '{"name": "read_file", "arguments": {"path": "<path>"}}' in answer["content"]
