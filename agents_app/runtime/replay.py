"""Replay: a litellm custom provider that answers from a recorded trace.

A trace file is JSON Lines: a ``header`` line, then ``model_step`` and ``tool_call``
lines in the order they happened (and an ``instructions`` line per unit: the
repository's instructions as that unit's prompt held them, given to the replayed unit
instead of what its worktree has now; a ``resumed`` line where a unit went on from an
approved call of the attempt before, which the replayed unit does too, and only then).
Replaying, the provider (model ``replay/<id>``) returns the recorded model steps one by
one, and the agent loop checks every tool call it is about to execute against the next
recorded one, by tool name and input hash. Any difference is a ``ReplayMiss``: the unit
fails, and no live model is ever called — replay never falls back.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings

import sf_native
from sf_core.errors import SfError

TRACE_FORMAT = "sf-trace/1"
PROVIDER = "replay"


class ReplayMiss(SfError):
    """The run diverged from the recording."""


class TraceFileInvalid(SfError):
    """A trace file that cannot be replayed."""


@dataclass
class Replay:
    """The cursor over one recorded trace."""

    header: dict[str, Any]
    model_steps: list[dict[str, Any]]
    tool_calls: list[dict[str, Any]]
    instructions: list[dict[str, Any]] = field(default_factory=list)
    # The units (1: the first with an instructions line) that resumed at an approved call.
    resumed_units: frozenset[int] = frozenset()
    id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    next_step: int = 0
    next_call: int = 0
    next_instructions: int = 0
    # The worktree the recorded unit ran in, and the one the replayed unit runs in.
    worktrees: tuple[str, str] = ("", "")
    # Which recorded unit (1: the first with an instructions line) each step and call is of.
    step_units: tuple[int, ...] = ()
    call_units: tuple[int, ...] = ()

    @property
    def model(self) -> str:
        return f"{PROVIDER}/{self.id}"

    def take_model_step(self) -> dict[str, Any]:
        if self.next_step >= len(self.model_steps):
            raise ReplayMiss(
                f"the recording has no model step #{self.next_step + 1} "
                f"(it has {len(self.model_steps)}); replay never calls a live model"
            )
        step = self.model_steps[self.next_step]
        self.next_step += 1
        recorded, here = self.worktrees
        if not recorded or recorded == here:
            return step
        calls = [
            {**call, "arguments": str(call.get("arguments") or "").replace(recorded, here)}
            for call in step.get("tool_calls") or []
        ]
        content = str(step.get("content") or "").replace(recorded, here)
        return {**step, "content": content, "tool_calls": calls}

    def units_split(self, count: int) -> list[Replay] | None:
        """The next ``count`` recorded units, each its own cursor, this one moved past
        them: a best-of-N round's attempts run at once, and one shared cursor would hand
        an attempt another's steps. None when the recording does not say which unit a
        step is of (no instructions lines), or this cursor is not at a unit's start."""
        first = self.next_instructions + 1
        numbers = range(first, first + count)
        if not self.step_units or first + count - 1 > len(self.instructions):
            return None
        if self.step_units[self.next_step : self.next_step + 1] != (first,):
            return None
        parts = [
            Replay(
                header=self.header,
                model_steps=[
                    s for s, u in zip(self.model_steps, self.step_units, strict=True) if u == n
                ],
                tool_calls=[
                    c for c, u in zip(self.tool_calls, self.call_units, strict=True) if u == n
                ],
                instructions=[self.instructions[n - 1]],
                resumed_units=frozenset({1} if n in self.resumed_units else ()),
            )
            for n in numbers
        ]
        self.next_step += sum(len(part.model_steps) for part in parts)
        self.next_call += sum(len(part.tool_calls) for part in parts)
        self.next_instructions += count
        return parts

    def worktree_map(self, recorded: str, here: str) -> None:
        """The unit about to replay runs in ``here``, recorded in ``recorded`` (""
        when the recording did not say): the model's steps name ``here`` instead."""
        self.worktrees = (recorded, here)

    def take_instructions(self) -> dict[str, Any] | None:
        """The next unit's recorded instructions (None: the recording has none left)."""
        if self.next_instructions >= len(self.instructions):
            return None
        self.next_instructions += 1
        return self.instructions[self.next_instructions - 1]

    def resumes(self) -> bool:
        """Whether the unit whose instructions were taken last resumed when recorded."""
        return self.next_instructions in self.resumed_units

    def expect_tool_call(self, name: str, input_hash: str, normalized: Any = None) -> None:
        """Raise ``ReplayMiss`` unless this is the next recorded tool call (``normalized``,
        its input: one that names this unit's worktree where the recorded call named the
        recording's, outside a path, is that call)."""
        position = self.next_call + 1
        if self.next_call >= len(self.tool_calls):
            raise ReplayMiss(f"tool call #{position} ({name}) is not in the recording")
        recorded = self.tool_calls[self.next_call]
        if recorded["input_hash"] != input_hash and normalized is not None and self.worktrees[0]:
            back = _replaced(normalized, self.worktrees[1], self.worktrees[0])
            input_hash = sf_native.canonical_hash({"tool": name, "input": back})
        if recorded["name"] != name or recorded["input_hash"] != input_hash:
            raise ReplayMiss(
                f"tool call #{position} differs from the recording: ran {name} with input hash "
                f"{input_hash[:12]}, recorded {recorded['name']} with {recorded['input_hash'][:12]}"
            )
        self.next_call += 1

    def last_output(self) -> str | None:
        """The recorded answer of the tool call matched last (None: none recorded)."""
        if self.next_call == 0:
            return None
        output = self.tool_calls[self.next_call - 1].get("output")
        return output if isinstance(output, str) else None


def _replaced(value: Any, old: str, new: str) -> Any:
    """``value`` with ``old`` replaced by ``new`` in every string it holds."""
    if isinstance(value, str):
        return value.replace(old, new)
    if isinstance(value, dict):
        return {key: _replaced(item, old, new) for key, item in value.items()}
    if isinstance(value, list):
        return [_replaced(item, old, new) for item in value]
    return value


def replay_load(path: str | Path) -> Replay:
    """Read a trace file; a malformed one raises ``TraceFileInvalid`` naming the line."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise TraceFileInvalid(f"{path}: cannot read: {exc}") from None
    records = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise TraceFileInvalid(f"{path}:{number}: not JSON: {exc.msg}") from None
    if (
        not records
        or records[0].get("type") != "header"
        or records[0].get("format") != TRACE_FORMAT
    ):
        raise TraceFileInvalid(f"{path}: the first line must be a {TRACE_FORMAT} header")
    steps = [r for r in records if r.get("type") == "model_step"]
    # Calls the model got wrong (bad arguments, unknown tool) never ran: no input hash.
    calls = [r for r in records if r.get("type") == "tool_call" and r.get("input_hash")]
    if not steps:
        raise TraceFileInvalid(f"{path}: no model steps to replay")
    for call in calls:
        if not isinstance(call.get("name"), str) or not isinstance(call["input_hash"], str):
            raise TraceFileInvalid(f"{path}: every tool_call needs a name and a string input_hash")
    instructions = [r for r in records if r.get("type") == "instructions"]
    if any(not isinstance(r.get("section"), str) for r in instructions):
        raise TraceFileInvalid(f"{path}: every instructions line needs a string section")
    resumed, units = set(), 0
    step_units: list[int] = []
    call_units: list[int] = []
    for record in records:
        units += record.get("type") == "instructions"
        if record.get("type") == "resumed":
            resumed.add(units)
        elif record.get("type") == "model_step":
            step_units.append(units)
        elif record.get("type") == "tool_call" and record.get("input_hash"):
            call_units.append(units)
    return Replay(
        header=records[0],
        model_steps=steps,
        tool_calls=calls,
        instructions=instructions,
        resumed_units=frozenset(resumed),
        step_units=tuple(step_units) if instructions else (),
        call_units=tuple(call_units) if instructions else (),
    )


# --- the litellm provider -------------------------------------------------------------

_ACTIVE: dict[str, Replay] = {}
_LOCK = threading.Lock()


def replay_activate(replay: Replay) -> str:
    """Register ``replay`` with the provider; returns the model name to call."""
    _install_provider()
    with _LOCK:
        _ACTIVE[replay.id] = replay
    return replay.model


def replay_deactivate(replay: Replay) -> None:
    with _LOCK:
        _ACTIVE.pop(replay.id, None)


def _install_provider() -> None:
    from agents_app.runtime.llm import litellm_module

    litellm = litellm_module()
    if any(entry.get("provider") == PROVIDER for entry in litellm.custom_provider_map):
        return
    litellm.custom_provider_map.append({"provider": PROVIDER, "custom_handler": _provider()})


def _provider() -> Any:
    from litellm import CustomLLM

    class ReplayLLM(CustomLLM):
        def completion(self, model: str, messages: list[Any], *args: Any, **kwargs: Any) -> Any:
            replay_id = model.split("/", 1)[-1]
            with _LOCK:
                replay = _ACTIVE.get(replay_id)
            if replay is None:
                raise ReplayMiss(
                    f"no active recording {replay_id}; replay never calls a live model"
                )
            step = replay.take_model_step()
            time.sleep(settings.SF_REPLAY_PACE.total_seconds())
            return recorded_response(model, step)

    return ReplayLLM()


def recorded_response(model: str, step: dict[str, Any]) -> Any:
    from litellm.types.utils import (
        ChatCompletionMessageToolCall,
        Choices,
        Function,
        Message,
        ModelResponse,
        Usage,
    )

    calls = [
        ChatCompletionMessageToolCall(
            id=call.get("id") or f"call_{index}",
            type="function",
            function=Function(name=call["name"], arguments=call.get("arguments") or "{}"),
        )
        for index, call in enumerate(step.get("tool_calls") or [])
    ]
    message = Message(content=step.get("content") or "", role="assistant", tool_calls=calls or None)
    response = ModelResponse(
        model=model,
        choices=[
            Choices(index=0, message=message, finish_reason="tool_calls" if calls else "stop")
        ],
        usage=Usage(
            prompt_tokens=int(step.get("tokens_in", 0)),
            completion_tokens=int(step.get("tokens_out", 0)),
            total_tokens=int(step.get("tokens_in", 0)) + int(step.get("tokens_out", 0)),
        ),
    )
    response._hidden_params["response_cost"] = float(step.get("cost", 0) or 0)
    return response
