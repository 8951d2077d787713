"""A unit's share of the repository's instructions: read from its worktree, traced.

The section (``agents_app.runtime.instructions``) is read from the unit's worktree
when its prompt is made, for the files its task intends to touch, within a share of
the model's window. It is recorded as a ``note`` trace event named ``instructions``
(which files, their sizes, cut or not, and the section as the model got it): the unit
page shows it, and ``trace_export`` writes it into a recording, so that a replayed
unit is given the recorded section again rather than what its worktree has now.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings

from agents_app.models import TraceEvent, TraceKind
from agents_app.runtime.context import context_window
from agents_app.runtime.instructions import (
    MAX_BYTES,
    TRACE_NAME,
    instructions_budget,
    instructions_read,
)
from agents_app.runtime.llm import ModelRouter
from agents_app.runtime.replay import Replay
from agents_app.runtime.trace import TraceRecorder
from tasks_app.models import Task


def unit_instructions(
    *,
    task: Task,
    worktree: Path,
    router: ModelRouter,
    recorder: TraceRecorder,
    replay: Replay | None,
) -> str:
    """The prompt's section of the repository's instructions ("" when there are none),
    recorded in the unit's trace."""
    recorded = replay.take_instructions() if replay is not None else None
    if replay is not None and recorded is not None:
        payload = {key: value for key, value in recorded.items() if key != "type"}
        payload["replayed"] = True
        # A model that wrote its worktree's absolute path wrote the recording's: here it
        # is this unit's (the prompt named this one).
        replay.worktree_map(str(recorded.get("worktree") or ""), str(worktree))
    else:
        window = context_window(router.model, router.context_window)
        limit = getattr(settings, "SF_INSTRUCTIONS_MAX_BYTES", MAX_BYTES)
        found = instructions_read(
            worktree, list(task.intent_claim), budget=instructions_budget(window, limit)
        )
        payload = {**found.payload(), "worktree": str(worktree)}
    recorder.record(TraceKind.NOTE, name=TRACE_NAME, payload=payload)
    return str(payload.get("section") or "")


def unit_instruction_files(unit_id: int) -> dict[str, Any] | None:
    """What the unit page shows: the files of the unit's recorded instructions, the
    budget, the nested files only named; None for a unit that recorded none (it ran
    before SF read instruction files, or has not made its prompt yet)."""
    event = (
        TraceEvent.objects.filter(unit_id=unit_id, kind=TraceKind.NOTE, name=TRACE_NAME)
        .order_by("seq")
        .first()
    )
    if event is None:
        return None
    payload = event.payload
    return {
        "files": [f for f in payload.get("files") or [] if isinstance(f, dict)],
        "others": [str(p) for p in payload.get("others") or []],
        "budget": payload.get("budget"),
        "replayed": bool(payload.get("replayed")),
    }
