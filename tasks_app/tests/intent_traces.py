"""Replay traces for the intent box: the planner's answer first (``"stage": "plan"``),
then the steps of the units, with input hashes computed as the agent loop does."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agents_app.runtime.recording import trace_from_steps, trace_write
from tasks_app.replays import PLAN_STAGE

INTENT = "Write a hello.txt that says hello"
PLAN: dict[str, Any] = {
    "summary": "Write hello.txt",
    "tasks": [
        {
            "key": "hello",
            "title": "Write hello.txt",
            "description": "A file hello.txt at the top of the repository that says hello.",
            "acceptance_criteria": ["`hello.txt` says hello"],
            "verify": ["grep -q hello hello.txt"],
            "risk_level": "low",
            "intent_claim": ["hello.txt"],
        }
    ],
}
# Under the normal profile a push needs a person's approval: the first unit stops there;
# once approved, the next unit replays from the start and goes on.
UNIT_STEPS: list[tuple[str, list[tuple[str, dict[str, Any]]]]] = [
    ("Publishing the branch first.", [("run_command", {"command": "git push origin main"})]),
    ("Writing the file.", [("write_file", {"path": "hello.txt", "content": "hello\n"})]),
    ("Done.", [("finish", {"summary": "wrote hello.txt"})]),
]


def intent_trace(
    path: Path,
    *,
    plan_answers: list[str] | None = None,
    unit_steps: list[tuple[str, list[tuple[str, dict[str, Any]]]]] | None = None,
) -> Path:
    """Write the trace to ``path``: the planner's answers (the plan's JSON unless
    given), then ``unit_steps`` (the journey's unless given)."""
    records = trace_from_steps(
        UNIT_STEPS if unit_steps is None else unit_steps,
        header={"note": "test fixture: planner answer, then the unit", "task": "hello"},
        worktree=path.parent,
    )
    answers = [json.dumps(PLAN)] if plan_answers is None else plan_answers
    planning = [
        {"type": "model_step", "stage": PLAN_STAGE, "content": text, "tokens_in": 300}
        for text in answers
    ]
    return trace_write(path, [records[0], *planning, *records[1:]])
