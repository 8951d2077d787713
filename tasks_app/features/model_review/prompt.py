"""What a model review is asked: the task's criteria and the unit's diff with its lines
numbered, and the one tool that ends it, ``review_verdict``."""

from __future__ import annotations

import html
import json
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agents_app.runtime.tools import Finished, Tool, ToolContext
from tasks_app.diffs import diff_files
from tasks_app.models import Task, Unit

VERDICT_TOOL = "review_verdict"
# The tools a review may use: it reads, and never writes or runs anything.
READ_ONLY_TOOLS = ("read_file", "grep", "glob", "list_dir")
MAX_DIFF_CHARS = 30_000  # of the numbered diff in the brief; the rest is cut, with a note
TAGS = re.compile(r"<[^>]+>")

SYSTEM = """You review a change a coding agent made, before a person reviews it. Its
verify commands passed. Read the task's acceptance criteria and the diff; you may read
files of the worktree (read_file, grep, glob, list_dir) but change nothing. Then call
review_verdict once: "approve" when the change meets every acceptance criterion and has
no bug you can point to, otherwise "request_changes". Give your reasons, and comment on
lines of the diff that need a change: the file's path and the line's number as the diff
below shows it (new: the line in the changed file; old: a removed line)."""


class LineComment(BaseModel):
    """A comment on one line of the diff."""

    model_config = ConfigDict(extra="ignore")

    path: str = Field(min_length=1, max_length=1000)
    line: int = Field(ge=1)
    side: Literal["new", "old"] = "new"
    text: str = Field(min_length=1, max_length=4000)


class VerdictInput(BaseModel):
    """Give the review's verdict and end the review: approve or request_changes, the
    reasons, and comments on lines of the diff."""

    model_config = ConfigDict(extra="ignore")

    verdict: Literal["approve", "request_changes"]
    reasons: str = Field(min_length=1, max_length=8000)
    comments: list[LineComment] = Field(default_factory=list, max_length=50)


def review_verdict(ctx: ToolContext, args: VerdictInput) -> str:
    """The review's last call: its verdict ends the loop (``Finished``), as JSON."""
    raise Finished(json.dumps(args.model_dump()))


VERDICT = Tool(VERDICT_TOOL, VerdictInput, review_verdict)


def review_messages(task: Task, unit: Unit) -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": review_brief(task, unit)},
    ]


def review_brief(task: Task, unit: Unit) -> str:
    """The task, its criteria and verify commands, and the diff to review."""
    parts = [f"# Task {task.key}: {task.title}"]
    if task.description:
        parts.append(task.description)
    parts.append(
        "## Acceptance criteria\n" + "\n".join(f"- {cid}: {text}" for cid, text in task.criteria)
    )
    if task.verify:
        parts.append(
            "## Verify commands (they passed)\n" + "\n".join(f"- `{cmd}`" for cmd in task.verify)
        )
    if unit.summary:
        parts.append(f"## The agent's summary\n{unit.summary[:2000]}")
    parts.append(
        f"## The change (attempt {unit.attempt})\n"
        "Each line: its number (new: in the changed file; old N: a removed line), then\n"
        "+ added, - removed, or a space for an unchanged line.\n"
        f"```\n{numbered_diff(unit.checkpoint_patch)}\n```"
    )
    parts.append(f"Review it, then call {VERDICT_TOOL}.")
    return "\n\n".join(parts)


def numbered_diff(patch: str) -> str:
    """The patch as files of numbered lines, the numbers a comment names; cut long."""
    out: list[str] = []
    for file in diff_files(patch):
        out.append(f"--- {file.path} ({file.status})")
        if file.binary:
            out.append("(binary)")
        for line in file.lines:
            text = html.unescape(TAGS.sub("", line.html))
            if line.kind == "hunk":
                out.append("...")
            elif line.kind == "del":
                out.append(f"old {line.old_no}\t-{text}")
            elif line.kind in ("add", "ctx"):
                out.append(f"{line.new_no}\t{line.sign}{text}")
    shown = "\n".join(out) or "(no change)"
    if len(shown) > MAX_DIFF_CHARS:
        cut = len(shown) - MAX_DIFF_CHARS
        shown = f"{shown[:MAX_DIFF_CHARS]}\n[… {cut} characters cut: read the files for the rest]"
    return shown
