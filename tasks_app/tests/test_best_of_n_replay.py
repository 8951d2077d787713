"""Replaying a best-of-N round: its attempts run at once, in threads, so each answers
from its own recorded unit (``Replay.units_split``), never from a cursor they share
(which would hand one attempt another's steps in whatever order the threads ran).
The recorded round itself is replayed in tests/test_live_replays.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agents_app.runtime.replay import TRACE_FORMAT, Replay, replay_load
from tasks_app.replays import REVIEW_STAGE, unit_replay


def step(content: str, **extra: Any) -> dict[str, Any]:
    return {"type": "model_step", "content": content, "tool_calls": [], **extra}


def call(name: str, digest: str, **extra: Any) -> dict[str, Any]:
    return {"type": "tool_call", "name": name, "input_hash": digest, "output": "", **extra}


def trace(tmp_path: Path, *records: dict[str, Any]) -> Path:
    path = tmp_path / "round.jsonl"
    header = {"type": "header", "format": TRACE_FORMAT}
    path.write_text("".join(json.dumps(r) + "\n" for r in (header, *records)))
    return path


def unit(path: str) -> dict[str, Any]:
    return {"type": "instructions", "section": "", "worktree": path}


def worktree(replay: Replay) -> str:
    """The worktree the next unit of ``replay`` was recorded in."""
    taken = replay.take_instructions()
    assert taken is not None
    return str(taken["worktree"])


def test_a_round_takes_one_recorded_unit_per_attempt_and_the_cursor_moves_past(
    tmp_path: Path,
) -> None:
    path = trace(
        tmp_path,
        unit("/w/p1-a.r1-1"),
        step("a1"),
        call("write_file", "h1"),
        step("a1 done"),
        step("review", stage=REVIEW_STAGE),
        unit("/w/p1-a.r1-2"),
        step("a2"),
        call("run_command", "h2"),
        unit("/w/p1-b-1"),
        step("b"),
    )
    shared = unit_replay(path)  # the units' answers: the review's left out
    parts = shared.units_split(2)

    assert parts is not None
    assert [[s["content"] for s in part.model_steps] for part in parts] == [
        ["a1", "a1 done"],
        ["a2"],
    ]
    assert [[c["input_hash"] for c in part.tool_calls] for part in parts] == [["h1"], ["h2"]]
    assert [worktree(part) for part in parts] == [
        "/w/p1-a.r1-1",
        "/w/p1-a.r1-2",
    ]
    assert len({part.id for part in parts}) == 2, "each its own cursor"
    # The next task's unit goes on from the shared cursor, after the round.
    assert worktree(shared) == "/w/p1-b-1"
    assert shared.take_model_step()["content"] == "b"


def test_a_recording_that_does_not_say_which_unit_a_step_is_of_is_not_split(
    tmp_path: Path,
) -> None:
    unmarked = replay_load(trace(tmp_path, step("a1"), step("a2")))
    assert unmarked.units_split(2) is None
    short = replay_load(trace(tmp_path, unit("/w/one"), step("a1")))
    assert short.units_split(2) is None, "a round of 2 needs 2 recorded units"
