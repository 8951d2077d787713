"""Edits written outside a JSON string: a fenced file after write_file, search/replace
blocks after edit_file or on their own (aider's format), and the closest lines quoted
when a search text is not found."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agents_app.models import AgentSession
from agents_app.runtime.loop import Outcome
from agents_app.runtime.tools import EditFileInput, ToolContext, ToolError, edit_file
from agents_app.tests.runtime_helpers import ScriptedModel
from agents_app.tests.test_loop import build_session  # noqa: F401 - fixture
from agents_app.tests.test_textcalls import QWEN_FINISH, recognised, text_loop

GREET = 'def greet(name):\n    return f"Hello, {name}"\n\n\ndef farewell(name):\n    return name\n'
BLOCK = (
    "<<<<<<< SEARCH\n"
    '    return f"Hello, {{name}}"\n'
    "=======\n"
    '    return f"{greeting}, {{name}}"\n'
    ">>>>>>> REPLACE\n"
)


def test_write_file_without_content_takes_the_fenced_block_after_it() -> None:
    content = (
        '```json\n{"name": "write_file", "arguments": {"path": "hi.py"}}\n```\n'
        "```python\nprint(\"hi\")\nprint('there')\n```\nThis prints two lines."
    )
    [call] = recognised(content).tool_calls
    assert json.loads(call.arguments) == {
        "path": "hi.py",
        "content": "print(\"hi\")\nprint('there')\n",
    }
    message = recognised(content).message
    assert message is not None
    assert message["content"] == "This prints two lines."  # the file is not kept twice


def test_edit_file_without_search_takes_each_block_after_it_in_order() -> None:
    content = (
        '{"name": "edit_file", "arguments": {"path": "greet.py"}}\n```python\n'
        + BLOCK.format(greeting="Hi")
        + "```\n```python\n"
        + BLOCK.format(greeting="Hey").replace("Hello", "Bye")
        + "```"
    )
    result = recognised(content)
    assert not result.refusal
    assert [json.loads(c.arguments) for c in result.tool_calls] == [
        {
            "path": "greet.py",
            "search": '    return f"Hello, {name}"\n',
            "replace": '    return f"Hi, {name}"\n',
        },
        {
            "path": "greet.py",
            "search": '    return f"Bye, {name}"\n',
            "replace": '    return f"Hey, {name}"\n',
        },
    ]


def test_search_replace_blocks_without_a_call_name_their_file_as_aider_writes_them() -> None:
    content = (
        "I'll change the greeting.\n\ngreet.py\n```python\n" + BLOCK.format(greeting="Hi") + "```"
    )
    [call] = recognised(content).tool_calls
    assert call.name == "edit_file"
    assert json.loads(call.arguments)["path"] == "greet.py"


def test_a_block_that_names_no_file_is_left_as_text() -> None:
    content = "Change it like this:\n```python\n" + BLOCK.format(greeting="Hi") + "```"
    assert recognised(content).tool_calls == []


@pytest.mark.django_db
def test_a_unit_edits_a_file_with_a_search_replace_block(
    build_session: AgentSession,  # noqa: F811
    git_repo: Path,
) -> None:
    (git_repo / "greet.py").write_text(GREET)
    edit = "greet.py\n```python\n" + BLOCK.format(greeting="Hi") + "```"
    model = ScriptedModel((edit, []), (QWEN_FINISH, []))
    result = text_loop(build_session, git_repo, model, "text").run(
        [{"role": "user", "content": "say hi"}]
    )
    assert result.outcome == Outcome.FINISHED, result.detail
    assert 'return f"Hi, {name}"' in (git_repo / "greet.py").read_text()
    assert "edited greet.py lines 2-2" in model.calls[1]["messages"][-1]["content"]


def test_a_search_text_not_found_is_answered_with_the_closest_lines(tmp_path: Path) -> None:
    (tmp_path / "greet.py").write_text(GREET)
    wanted = EditFileInput(
        path="greet.py", search="def farewell(person):\n    return person\n", replace="x"
    )
    with pytest.raises(ToolError) as refused:
        edit_file(ToolContext(worktree=tmp_path), wanted)
    message = str(refused.value)
    assert "The closest lines are:\n     5\tdef farewell(name):\n     6\t    return name\n" in (
        message
    )
