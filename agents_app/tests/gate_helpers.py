"""Helpers for the permission gate's tests: a worktree with a symlink out, and calls."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from agents_app.gate.schemas import GateContext, ToolCall

HOME = os.path.expanduser("~")


def gate_worktree(tmp_path: Path) -> Path:
    """A worktree with a source file, a script, and ``etc-link`` pointing at /etc."""
    root = tmp_path / "wt"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text("print(1)\n")
    (root / "scripts").mkdir()
    (root / "scripts" / "check.sh").write_text("#!/bin/sh\n")
    os.symlink("/etc", root / "etc-link")
    return root


def context(
    worktree: Path, profile: str = "normal", run: str = "autonomous", **kw: Any
) -> GateContext:
    return GateContext(
        permission_profile=profile, run_control=run, work_mode="build", worktree=worktree, **kw
    )


def shell(command: str) -> ToolCall:
    return ToolCall(tool="run_command", input={"command": command})


def write(path: str) -> ToolCall:
    return ToolCall(tool="write_file", input={"path": path, "content": "x"})


def read(path: str) -> ToolCall:
    return ToolCall(tool="read_file", input={"path": path})
