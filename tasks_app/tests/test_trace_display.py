"""Trace events rendered as what they are, not as Python reprs of their payloads."""

from __future__ import annotations

import json

from tasks_app.trace_display import COLLAPSE_LINES, Block, event_blocks


def kinds(blocks: list[Block]) -> list[tuple[str, str]]:
    return [(block.kind, block.text) for block in blocks]


def test_run_command_is_a_command_line() -> None:
    blocks = event_blocks(
        "tool_call",
        "run_command",
        {"arguments": {"command": "pytest -q tests/", "cwd": "src"}, "output": "3 passed\n"},
    )
    assert kinds(blocks) == [("command", "pytest -q tests/"), ("text", "3 passed\n")]
    assert blocks[0].label == "in src"


def test_write_file_shows_the_path_and_numbered_content() -> None:
    blocks = event_blocks(
        "tool_call",
        "write_file",
        {"arguments": {"path": "hello.txt", "content": "one\ntwo\n"}, "output": "wrote 8 bytes"},
    )
    assert kinds(blocks)[0] == ("path", "hello.txt")
    assert blocks[1].line_count == 2
    assert blocks[1].kind == "code"
    assert blocks[1].numbered == [(1, "one"), (2, "two")]
    assert all("\\n" not in block.text for block in blocks)


def test_model_steps_name_their_calls_from_raw_json_arguments() -> None:
    payload = {
        "content": "Let me look.",
        "tool_calls": [
            {"name": "read_file", "arguments": json.dumps({"path": "a.py", "offset": 3})},
            {"name": "run_command", "arguments": json.dumps({"command": "make test\nmake lint"})},
            {"name": "grep", "arguments": "{not json"},
        ],
    }
    blocks = event_blocks("model_step", "openai/x", payload)
    assert [(b.kind, b.text, b.label) for b in blocks] == [
        ("text", "Let me look.", "says"),
        ("call", "read_file", "a.py"),
        ("call", "run_command", "make test…"),
        ("call", "grep", ""),
    ]


def test_arguments_the_model_could_not_send_as_json_are_shown_as_sent() -> None:
    assert kinds(event_blocks("tool_call", "grep", {"arguments": "{not json"})) == [
        ("text", "{not json")
    ]


def test_left_over_options_are_one_line_and_nested_ones_json() -> None:
    blocks = event_blocks("tool_call", "read_file", {"arguments": {"path": "a.py", "offset": 3}})
    assert kinds(blocks) == [("path", "a.py"), ("options", "offset 3")]
    blocks = event_blocks("tool_call", "grep", {"arguments": {"pattern": "x", "include": ["*.py"]}})
    assert kinds(blocks) == [("json", '{\n  "pattern": "x",\n  "include": [\n    "*.py"\n  ]\n}')]


def test_json_output_is_pretty_and_long_output_is_collapsed() -> None:
    [_, output] = event_blocks(
        "tool_call", "list_dir", {"arguments": {"path": "."}, "output": '{"files": ["a", "b"]}'}
    )
    assert output.kind == "json"
    assert output.text == '{\n  "files": [\n    "a",\n    "b"\n  ]\n}'
    assert not output.collapsed
    long = "\n".join(f"line {i}" for i in range(COLLAPSE_LINES + 1))
    [_, output] = event_blocks(
        "tool_call", "run_command", {"arguments": {"command": "ls"}, "output": long}
    )
    assert output.collapsed


def test_other_events_are_pretty_json_without_the_decision() -> None:
    blocks = event_blocks("note", "budget", {"message": "80% spent", "decision": {"x": 1}})
    assert kinds(blocks) == [("json", '{\n  "message": "80% spent"\n}')]
