"""Answers cut off at the output limit (``finish_reason: length``).

A cut-off tool call has arguments that end mid-JSON. Running it would be wrong, and
answering "invalid arguments" makes the model send the same too-long call again. Each
incomplete call is answered (every call id needs its result) with what happened and
how to go on: write in parts. Complete calls in the same answer run as usual. A cut-off
answer without calls is asked to continue where it stopped.
"""

from __future__ import annotations

import json

from agents_app.runtime.llm import ToolCallRequest

TEXT_CUT = (
    "Your answer was cut off at the output limit ({limit} tokens). Continue exactly where "
    "it stopped, or make the change in smaller steps."
)
CALL_CUT = (
    "Your call to {name} was cut off at the output limit ({limit} tokens) before its "
    "arguments were complete; nothing was run. Write in parts: write_file with the first "
    "part of the file, then edit_file to add each next part after the end of the "
    "previous one, each call well under the limit."
)


def complete_json(arguments: str) -> bool:
    try:
        return isinstance(json.loads(arguments or "{}"), dict)
    except json.JSONDecodeError:
        return False


def cut_off(calls: list[ToolCallRequest]) -> set[str]:
    """Ids of the calls whose arguments the limit cut off."""
    return {call.id for call in calls if not complete_json(call.arguments)}


def call_cut_message(call: ToolCallRequest, limit: int) -> str:
    return CALL_CUT.format(name=call.name, limit=limit)


def text_cut_message(limit: int) -> str:
    return TEXT_CUT.format(limit=limit)
