"""A stable form of a tool call's input: what the audit record stores and hashes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agents_app.gate.catalog.tools import TOOLS
from agents_app.gate.mcp import is_mcp, mcp_approval_subject
from agents_app.gate.paths import lexical_path
from agents_app.gate.schemas import ToolCall


def normalize_input(call: ToolCall, worktree: Path | str | None = None) -> dict[str, Any]:
    """A stable form of the tool input for the audit record and its hash.

    Commands get their whitespace collapsed outside quotes; paths become worktree-relative
    when they are inside it (lexically: no symlink is followed, so the form is the same
    whatever is on disk).
    """
    data = dict(call.input)
    spec = TOOLS.get(call.tool)
    if call.tool == "run_command" and isinstance(data.get("command"), str):
        data["command"] = collapse_whitespace(data["command"])
    for key in spec.path_keys if spec else ():
        if isinstance(data.get(key), str):
            data[key] = lexical_path(data[key], worktree)
    return data


def approval_subject(tool: str, normalized: dict[str, Any]) -> str:
    """What an exact approval of a call matches: the normalized command (with the
    directory it runs in, when given), the skill loaded, an MCP call's arguments, or
    the normalized path; "" when none."""
    if is_mcp(tool):  # that call exactly: the tool with these arguments
        return mcp_approval_subject(normalized)
    if tool == "run_command":
        command = normalized.get("command")
        if not isinstance(command, str):
            return ""
        cwd = normalized.get("cwd")
        return (
            f"{command}  (in {cwd})" if isinstance(cwd, str) and cwd not in ("", ".") else command
        )
    if tool == "load_skill":  # approved for the session: that skill, not every skill
        name = normalized.get("name")
        return f"skill {name}" if isinstance(name, str) and name else ""
    path = normalized.get("path")
    return path if isinstance(path, str) else ""


def collapse_whitespace(command: str) -> str:
    """Runs of blanks outside quotes become one space; here-docs are left as written."""
    if "<<" in command:
        return command.strip()
    out: list[str] = []
    quote = ""
    escaped = pending = False
    for char in command.strip():
        if not (escaped or quote) and char in " \t":
            pending = True
            continue
        if pending and char != "\n" and out and out[-1] != "\n":
            out.append(" ")
        pending = False
        if escaped:
            escaped = False
        elif char == "\\" and quote != "'":
            escaped = True
        elif quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        out.append(char)
    return "".join(out)
