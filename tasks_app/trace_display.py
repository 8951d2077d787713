"""A unit's trace as a reviewer reads it: each tool call's input shown as what it is
(a command line, a path, file content with line numbers, pretty JSON) and long
outputs collapsed, instead of the Python repr of a payload dict."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from agents_app.models import TraceEvent, TraceKind
from agents_app.runtime.instructions import TRACE_NAME as INSTRUCTIONS

# Past these an output starts collapsed (<details> without ``open``).
COLLAPSE_LINES = 12
COLLAPSE_CHARS = 1200


@dataclass(frozen=True)
class Block:
    kind: str  # command, path, code, json, text
    label: str
    text: str
    numbered: list[tuple[int, str]] = field(default_factory=list)

    @property
    def line_count(self) -> int:
        return len(self.numbered) if self.numbered else len(self.text.splitlines())

    @property
    def collapsed(self) -> bool:
        return self.line_count > COLLAPSE_LINES or len(self.text) > COLLAPSE_CHARS


@dataclass(frozen=True)
class TraceEntry:
    event: TraceEvent
    blocks: list[Block]


def trace_entries(events: Iterable[TraceEvent]) -> list[TraceEntry]:
    return [
        TraceEntry(event, event_blocks(event.kind, event.name, event.payload)) for event in events
    ]


def event_blocks(kind: str, name: str, payload: dict[str, Any]) -> list[Block]:
    """What one trace event shows, block by block."""
    if kind == TraceKind.MODEL_STEP:
        blocks = [Block("text", "says", payload["content"])] if payload.get("content") else []
        # Only what each call is about: the tool_call event that follows shows it all.
        for call in payload.get("tool_calls") or []:
            name = str(call.get("name", "?"))
            blocks.append(Block("call", call_gist(name, call.get("arguments")), name))
        # What SF made of the answer: calls it refused or recognised in the text, a cut
        # conversation, a format it had to drop. Shown where it happened, not only in the API.
        blocks.extend(Block("note", "SF", str(note)) for note in payload.get("notes") or [])
        return blocks
    if kind == TraceKind.TOOL_CALL:
        blocks = call_blocks(name, payload.get("arguments"))
        if "output" in payload:
            blocks.append(output_block(payload["output"]))
        return blocks
    if kind == TraceKind.NOTE and name == INSTRUCTIONS and isinstance(payload.get("section"), str):
        return _instruction_blocks(payload)
    if kind == TraceKind.HOOK:
        return _hook_blocks(payload)
    if kind == TraceKind.NOTE and name == "followup":  # a person's words to the model
        who = f"from {payload.get('author', '?')}, sent {_when(payload.get('sent_at'))}"
        return [Block("followup", who, str(payload.get("text", "")))]
    shown = {key: value for key, value in payload.items() if key != "decision"}
    return [Block("json", "payload", pretty_json(shown))] if shown else []


def _hook_blocks(payload: dict[str, Any]) -> list[Block]:
    """A run of one of the project's hooks: what ran at which trigger, how it ended
    (blocked, noted, failed, ran, capped) and what it printed."""
    trigger = str(payload.get("trigger", "?"))
    tool = f" {payload['tool']}" if payload.get("tool") else ""
    blocks = [Block("command", f"{trigger}{tool}", str(payload.get("command", "")))]
    words = [f"exit {payload['exit_code']}" if payload.get("exit_code") is not None else ""]
    words.append(f"{payload.get('seconds', 0)} s")
    words.append(f"run {payload.get('run')} of {payload.get('max_runs')}")
    words.append(f"output {payload.get('output_mode', '?')}")
    if payload.get("problem"):
        words.append(str(payload["problem"]))
    effect = str(payload.get("effect", "ran"))
    blocks.append(Block("hook", effect, " · ".join(word for word in words if word)))
    if payload.get("output"):
        blocks.append(output_block(payload["output"]))
    return blocks


def _instruction_blocks(payload: dict[str, Any]) -> list[Block]:
    """The repository's instruction files: which, then the section the model got."""
    files = [f for f in payload.get("files") or [] if isinstance(f, dict)]
    listed = ", ".join(str(f.get("path")) for f in files) or "none in the repository"
    blocks = [Block("options", "files", f"instruction files: {listed}")]
    if payload["section"]:
        blocks.append(Block("text", "the prompt's section", payload["section"]))
    return blocks


def _when(stamp: Any) -> str:
    """An ISO time as people read it (UTC, to the second); anything else as it is."""
    try:
        return datetime.fromisoformat(str(stamp)).astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    except ValueError:
        return str(stamp)


def call_blocks(tool: str, arguments: Any) -> list[Block]:
    """A tool call's input. Arguments arrive as a dict, or as the model's raw JSON
    string when it could not be parsed (then they are shown as they came)."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return [Block("text", "arguments", arguments)]
    if not isinstance(arguments, dict):
        return [Block("json", "arguments", pretty_json(arguments))]
    args = dict(arguments)
    blocks = _known_tool_blocks(tool, args)
    if args:  # whatever the known shapes did not consume: options such as timeout_s
        flat = all(isinstance(value, str | int | float | bool) for value in args.values())
        if flat:
            options = " · ".join(f"{key} {value}" for key, value in args.items())
            blocks.append(Block("options", "options", options))
        else:
            blocks.append(Block("json", "arguments", pretty_json(args)))
    return blocks


def call_gist(tool: str, arguments: Any) -> str:
    """One line saying what a call is about: its command, else its path."""
    for block in call_blocks(tool, arguments):
        if block.kind in ("command", "path"):
            first = block.text.splitlines()[0] if block.text else ""
            return first[:120] + ("…" if len(block.text) > len(first[:120]) else "")
    return ""


def _known_tool_blocks(tool: str, args: dict[str, Any]) -> list[Block]:
    """Blocks for the arguments a tool is known to take; consumes them from ``args``."""
    blocks = []
    if tool == "run_command" and isinstance(args.get("command"), str):
        cwd = args.pop("cwd", None)
        blocks.append(Block("command", f"in {cwd}" if cwd else "", args.pop("command")))
    if isinstance(args.get("path"), str):
        blocks.append(Block("path", tool, args.pop("path")))
    for key in ("content", "search", "replace"):
        if isinstance(args.get(key), str):
            text = args.pop(key)
            blocks.append(Block("code", key, text, numbered_lines(text)))
    for key in ("summary", "question"):
        if isinstance(args.get(key), str):
            blocks.append(Block("text", key, args.pop(key)))
    return blocks


def output_block(output: Any) -> Block:
    if not isinstance(output, str):
        return Block("json", "output", pretty_json(output))
    stripped = output.strip()
    if stripped[:1] in ("{", "[") and stripped[-1:] in ("}", "]"):
        try:
            return Block("json", "output", pretty_json(json.loads(stripped)))
        except ValueError:
            pass
    return Block("text", "output", output)


def numbered_lines(text: str) -> list[tuple[int, str]]:
    return list(enumerate(text.splitlines() or [""], start=1))


def pretty_json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False, default=str)
