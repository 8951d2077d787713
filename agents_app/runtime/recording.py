"""Writing trace files: from a unit's recorded events, or from hand-written steps."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

import sf_native
from agents_app.gate.mcp import is_mcp
from agents_app.gate.normalize import normalize_input
from agents_app.gate.redaction import redact_payload
from agents_app.gate.schemas import ToolCall
from agents_app.models import TraceEvent, TraceKind
from agents_app.runtime.instructions import TRACE_NAME as INSTRUCTIONS
from agents_app.runtime.replay import TRACE_FORMAT
from agents_app.runtime.tools import TOOLS

RESUMED = "resumed"  # the note of a unit that went on from an approved call (tasks_app)
FOLLOWUP = "followup"  # the note of a person's follow-up the unit took (tasks_app)


def trace_export(*, unit_id: int, header: dict[str, Any]) -> list[dict[str, Any]]:
    """A unit's trace as replayable records (model steps, executed tool calls, and the
    repository's instructions its prompt held; people's follow-ups the unit took, where
    it took them, so that a replay can send them at the same point)."""
    records: list[dict[str, Any]] = [{"type": "header", "format": TRACE_FORMAT, **header}]
    for event in TraceEvent.objects.filter(unit_id=unit_id).order_by("seq"):
        if event.kind == TraceKind.MODEL_STEP:
            records.append(
                {
                    "type": "model_step",
                    "content": event.payload.get("content", ""),
                    "tool_calls": event.payload.get("tool_calls", []),
                    "tokens_in": event.tokens_in,
                    "tokens_out": event.tokens_out,
                    "cost": float(event.cost),
                    **_stage(event),
                }
            )
        elif event.kind == TraceKind.NOTE and event.name == INSTRUCTIONS:
            records.append({"type": "instructions", **event.payload})
        elif event.kind == TraceKind.NOTE and event.name == RESUMED:
            records.append({"type": "resumed", **event.payload})
        elif event.kind == TraceKind.NOTE and event.name == FOLLOWUP:
            records.append({"type": "followup", **event.payload})
        elif event.kind == TraceKind.TOOL_CALL:
            records.append(
                {
                    "type": "tool_call",
                    "name": event.name,
                    "input": event.payload.get("arguments"),
                    "input_hash": event.input_hash,
                    "output": event.payload.get("output", ""),
                    **_stage(event),
                }
            )
    return records


def _stage(event: TraceEvent) -> dict[str, Any]:
    """The stage an event was recorded in, when not the unit's own loop (a model
    review's: ``tasks_app.features.model_review``), so a replay gives each its own."""
    stage = event.payload.get("stage")
    return {"stage": stage} if isinstance(stage, str) and stage else {}


def trace_from_steps(
    steps: Sequence[tuple[str, Sequence[tuple[str, dict[str, Any]]]]],
    *,
    header: dict[str, Any],
    worktree: Path,
    cost_per_step: float = 0.0,
) -> list[dict[str, Any]]:
    """Build a trace from ``(content, [(tool, arguments), …])`` steps, hashing each call
    exactly as the agent loop does (parsed with the tool's schema, then normalized)."""
    records: list[dict[str, Any]] = [{"type": "header", "format": TRACE_FORMAT, **header}]
    counter = 0
    for content, calls in steps:
        numbered = []
        for tool, arguments in calls:
            counter += 1
            numbered.append(
                {"id": f"call_{counter}", "name": tool, "arguments": json.dumps(arguments)}
            )
        records.append(
            {
                "type": "model_step",
                "content": content,
                "tool_calls": numbered,
                "tokens_in": 100,
                "tokens_out": 20,
                "cost": cost_per_step,
            }
        )
        for tool, arguments in calls:
            normalized = _normalized(tool, arguments, worktree)
            if normalized is None:
                continue
            records.append(
                {
                    "type": "tool_call",
                    "name": tool,
                    "input": normalized,
                    "input_hash": sf_native.canonical_hash({"tool": tool, "input": normalized}),
                }
            )
    return records


def _normalized(tool: str, arguments: dict[str, Any], worktree: Path) -> dict[str, Any] | None:
    """A call's input as the agent loop hashes it (redacted, as stored); None for a call
    that never runs (an unknown tool, bad arguments): nothing to match on replay."""
    if is_mcp(tool):  # an MCP server's schema is checked when it runs; hashed as given
        return redact_payload(dict(arguments))
    if tool not in TOOLS:
        return None
    try:
        parsed = TOOLS[tool].parse(arguments).model_dump()
    except ValidationError:
        return None
    normalized: dict[str, Any] = redact_payload(
        normalize_input(ToolCall(tool=tool, input=parsed), worktree)
    )
    return normalized


def trace_write(path: Path, records: Iterable[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return path
