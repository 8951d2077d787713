"""Tool calls written as text: recognised when they are unambiguous, refused otherwise.

Small local models asked with ``tool_choice`` auto answer with the call in their text
(``../shared/LOCAL_MODEL.md``: Qwen2.5-Coder wrote a fenced ```json block every time)::

    ```json
    {"name": "write_file", "arguments": {"path": "hello.py", "content": "print('hello')"}}
    ```

In the ``text`` and ``json_schema`` styles an answer without structured calls is read for
JSON objects with a ``name`` and ``arguments`` (``parameters`` is accepted for the
same), in fenced blocks or bare in the text (Qwen's ``<tool_call>…</tool_call>`` too).
Exactly one call — the same call repeated counts once — whose tool is offered and whose
arguments pass the tool's schema becomes a structured call with a synthesised id, so
the conversation reads as if the model had called the tool natively. An answer that is
nothing but calls in order (a JSON list, ``{"functions": [...]}``, one call per line,
bare or in one fenced block) runs its first call, as the first of native parallel calls
would, and the model is told the others did not run: each call should see the result of
the one before (a small model writes the edit of a file in the same answer as the read of
it, guessing its text).
Anything else that looks like a call (different calls with prose between them — often
alternatives —, an unknown tool, arguments that do not fit, JSON that does not parse)
is refused with a message back to the model and nothing runs; an unknown tool is
answered with the tools, bad arguments with the tool's parameters and the call written
right (``tools.call_help``), and such a refusal is ``correctable``: the loop gives the
model more tries at it than at answers without any call. An answer with no call-shaped
JSON at all is plain text, as before.

Sloppy JSON a small model writes is read as what it means when that is unambiguous:
Python's ``True``/``False``/``None`` outside strings, and a Python dict literal
(single quotes), read with ``ast.literal_eval`` (literals only, nothing evaluated).
"""

from __future__ import annotations

import ast
import contextlib
import json
import re
import uuid
from dataclasses import dataclass, replace
from typing import Any

from pydantic import ValidationError

from agents_app.runtime import editblocks
from agents_app.runtime.editblocks import edit_blocks, more_edits
from agents_app.runtime.llm import ModelStep, ToolCallRequest
from agents_app.runtime.tools import Tool, call_help

FENCE = re.compile(r"```[ \t]*([A-Za-z_-]*)[ \t]*\n?(.*?)```", re.DOTALL)
CALL_START = re.compile(r"""\{\s*["']name["']\s*:""")
PYTHON_LITERALS = {"True": "true", "False": "false", "None": "null"}
ARGUMENT_KEYS = ("arguments", "parameters")
ONE_CALL = (
    'Write exactly one tool call as a JSON object {"name": "<tool>", "arguments": {…}}, '
    "or use the tool-call interface."
)


@dataclass(frozen=True)
class _Candidate:
    name: str
    arguments: Any
    source: str  # the text it was read from, cut out of the content when taken


def recognise_step(step: ModelStep, tools: dict[str, Tool], offered: list[str]) -> ModelStep:
    """``step`` with a call read from its text, or with ``refusal`` set; unchanged when
    it has structured calls already or its text holds nothing call-shaped."""
    if step.tool_calls or not step.content:
        return step
    candidates, malformed = _candidates(step.content)
    if not candidates:
        edits = edit_blocks(step.content)
        if edits:
            return _edits(step, edits, tools, offered)
        if malformed:
            refusal = f"Your tool call is not valid JSON: {malformed}. {ONE_CALL}"
            return replace(step, refusal=refusal)
        return step
    distinct = {(c.name, json.dumps(c.arguments, sort_keys=True)): c for c in candidates}
    if len(distinct) > 1 and _nothing_but_calls(step.content, candidates):
        return _first_of_sequence(step, list(distinct.values()), tools, offered)
    if len(distinct) > 1:
        names = ", ".join(sorted({c.name for c in candidates}))
        return replace(
            step,
            refusal=(
                f"Your answer holds {len(distinct)} different tool calls ({names}) with "
                "text between them; none was run, since it is not clear which one you meant "
                "(alternatives, or steps to take in turn). " + ONE_CALL
            ),
        )
    chosen, completed_by = _completed(candidates[0], step.content)
    sources = [c.source for c in candidates] + [completed_by]
    problem = _problem(chosen, tools, offered)
    if problem:
        return _refused(step, problem)
    following = step.content[step.content.find(completed_by) + len(completed_by) :]
    more = more_edits(chosen.name, chosen.arguments, following) if completed_by else []
    if more:
        return _edits(step, [_edit_of(chosen, completed_by), *more], tools, offered)
    return _as_structured(step, [chosen], sources)


def _completed(candidate: _Candidate, content: str) -> tuple[_Candidate, str]:
    """The call with the code written after it (``editblocks.after_call``) put in."""
    following = content[content.find(candidate.source) + len(candidate.source) :]
    arguments, source = editblocks.after_call(candidate.name, candidate.arguments, following)
    return replace(candidate, arguments=arguments), source


def _edit_of(candidate: _Candidate, source: str) -> editblocks.Edit:
    values = candidate.arguments
    return editblocks.Edit(values["path"], values["search"], values["replace"], source)


def _edits(
    step: ModelStep, edits: list[editblocks.Edit], tools: dict[str, Tool], offered: list[str]
) -> ModelStep:
    """Search/replace blocks as ``edit_file`` calls, run in order (each is answered)."""
    calls = [_Candidate("edit_file", _edit_arguments(e), e.source) for e in edits]
    for call in calls:
        problem = _problem(call, tools, offered)
        if problem:
            return _refused(step, problem)
    return _as_structured(step, calls, [c.source for c in calls])


def _refused(step: ModelStep, problem: str) -> ModelStep:
    """A recognised call that cannot run: the model is told why and how to write it."""
    return replace(step, refusal=f"Nothing was run: {problem}", correctable=True)


def _nothing_but_calls(content: str, candidates: list[_Candidate]) -> bool:
    """The answer is calls in order and nothing else: one JSON value listing them, or
    one call per line or block. Prose between calls (steps described, alternatives
    offered) makes them ambiguous."""
    rest = content
    for source in {c.source for c in candidates}:
        rest = rest.replace(source, "")
    return not re.sub(r"</?tool_call>|```", "", rest).strip()


def _first_of_sequence(
    step: ModelStep, calls: list[_Candidate], tools: dict[str, Tool], offered: list[str]
) -> ModelStep:
    """One JSON value listing several calls in order (``[{…}, {…}]``, ``{"functions":
    [...]}``) is a plan, not an ambiguity: its first call runs, as the first of native
    parallel calls would, and the model is told that the others did not."""
    first, later = calls[0], [call.name for call in calls[1:]]
    problem = _problem(first, tools, offered)
    if problem:
        return _refused(step, problem)
    note = (
        f"Only your first call ({first.name}) was run; its result is above. Send the next "
        f"call ({', '.join(later)}) as an answer of its own if it is still needed."
    )
    structured = _as_structured(step, [first], [first.source])
    return replace(structured, note=note, not_run=tuple(later))


def step_note(step: ModelStep) -> str:
    """For the trace (the unit page shows it at the step): what became of the calls
    written as text — which ran, and why the others did not."""
    if step.from_text:
        names = ", ".join(call.name for call in step.tool_calls)
        note = f"tool call {names} recognised in the text"
        if step.not_run:  # several calls in order: the first ran, the model sends the rest
            note += (
                f"; it was the first of {len(step.not_run) + 1} calls: "
                f"{', '.join(step.not_run)} not run (each call should see the result of the "
                "one before: the model was asked to send them one answer at a time)"
            )
        return note
    return f"tool call in the text refused: {step.refusal}"


def _problem(candidate: _Candidate, tools: dict[str, Tool], offered: list[str]) -> str:
    tool = tools.get(candidate.name)
    if tool is None or candidate.name not in offered:
        return f"unknown tool {candidate.name!r} (available: {', '.join(offered)}). {ONE_CALL}"
    if not isinstance(candidate.arguments, dict):
        return f"the arguments of {candidate.name} must be a JSON object. {ONE_CALL}"
    try:
        tool.parse(candidate.arguments)
    except ValidationError as exc:
        return call_help(tool, candidate.arguments, exc)
    return ""


def _edit_arguments(edit: editblocks.Edit) -> dict[str, str]:
    return {"path": edit.path, "search": edit.search, "replace": edit.replace}


def _as_structured(step: ModelStep, chosen: list[_Candidate], sources: list[str]) -> ModelStep:
    calls = [
        ToolCallRequest(
            id=f"call_{uuid.uuid4().hex[:24]}",
            name=candidate.name,
            arguments=json.dumps(candidate.arguments, ensure_ascii=False),
        )
        for candidate in chosen
    ]
    remainder = step.content
    for source in sources:
        if source:
            remainder = remainder.replace(source, "")
    remainder = re.sub(r"</?tool_call>", "", remainder)
    remainder = re.sub(r"```[^\n`]*\n\s*```", "", remainder).strip()  # emptied fences
    message = {
        **(step.message or {"role": "assistant"}),
        "content": remainder or None,
        "tool_calls": [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments},
            }
            for call in calls
        ],
    }
    return replace(step, tool_calls=calls, message=message, from_text=True)


def _candidates(content: str) -> tuple[list[_Candidate], str]:
    """Call-shaped objects in fenced blocks and bare in the text, and the first parse
    error of something that started like a call but is not JSON."""
    found: list[_Candidate | None] = []
    malformed = ""
    rest = content
    for match in FENCE.finditer(content):
        body = match.group(2).strip()
        rest = rest.replace(match.group(0), "\n")
        if not body.startswith(("{", "[")):
            continue
        try:
            value = json.loads(body)
        except json.JSONDecodeError as exc:
            value = _pythonic(body) or _calls_per_line(body)
            if value is None:
                if CALL_START.search(body):
                    malformed = malformed or f"{exc.msg} at line {exc.lineno} column {exc.colno}"
                continue
        found += [_candidate(item, match.group(0)) for item in _items(value)]
    bare, bare_error = _bare_objects(rest)
    found += bare
    valid = [c for c in found if c is not None]
    return valid, malformed or bare_error


def _calls_per_line(body: str) -> list[Any] | None:
    """A fenced block of calls one a line, nothing else (JSON Lines): the calls in
    order, as a list would hold them; None for anything else."""
    lines = [line.strip() for line in body.splitlines() if line.strip()]
    if len(lines) < 2:
        return None
    try:
        values = [json.loads(line) for line in lines]
    except json.JSONDecodeError:
        return None
    return values if all(_candidate(value, "") is not None for value in values) else None


def _bare_objects(text: str) -> tuple[list[_Candidate | None], str]:
    decoder = json.JSONDecoder()
    found: list[_Candidate | None] = []
    error = ""
    position = _json_start(text, 0)
    while position != -1:
        try:
            value, end = decoder.raw_decode(text, position)
        except json.JSONDecodeError as exc:
            end = _balanced_end(text, position)
            value = _pythonic(text[position:end]) if end != -1 else None
            if value is None:
                if CALL_START.match(text, position):
                    error = error or f"{exc.msg} at line {exc.lineno} column {exc.colno}"
                position = _json_start(text, position + 1)
                continue
        found += [_candidate(item, text[position:end]) for item in _items(value)]
        position = _json_start(text, end)
    return found, error


def _json_start(text: str, start: int) -> int:
    """Where the next JSON object or list may begin (a list of calls is one value)."""
    found = [index for index in (text.find("{", start), text.find("[", start)) if index != -1]
    return min(found, default=-1)


WRAPPERS = ("tool_calls", "functions", "calls")


def _items(value: Any) -> list[Any]:
    """The calls a JSON value holds, in order: itself, the items of a list, those of a
    wrapper object (``{"tool_calls": [...]}``, ``{"functions": [...]}``, with or without
    a ``summary`` beside them), and the function of an OpenAI-shaped item
    (``{"type": "function", "function": {"name": …, "arguments": …}}``)."""
    if isinstance(value, list):
        return [item for entry in value for item in _items(entry)]
    if not isinstance(value, dict) or "name" in value:
        return [value]
    for key in WRAPPERS:
        if isinstance(value.get(key), list):
            return _items(value[key])
    if isinstance(value.get("function"), dict):
        return [value["function"]]
    return [value]


def _candidate(value: Any, source: str) -> _Candidate | None:
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        return None
    keys = [key for key in ARGUMENT_KEYS if key in value]
    if len(keys) != 1:
        return None
    arguments = value[keys[0]]
    if isinstance(arguments, str):  # the OpenAI wire shape: arguments as JSON text
        with contextlib.suppress(json.JSONDecodeError):
            arguments = json.loads(arguments)
    return _Candidate(name=value["name"], arguments=arguments, source=source)


def _pythonic(text: str) -> Any:
    """``text`` read as JSON with Python's literals, or as a Python literal; None when it
    is neither or holds no call-shaped value (prose in braces stays prose)."""
    if not CALL_START.search(text):
        return None
    with contextlib.suppress(json.JSONDecodeError):
        return json.loads(_json_literals(text))
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    return value if isinstance(value, (dict, list)) else None


def _json_literals(text: str) -> str:
    """``True``/``False``/``None`` outside strings as JSON's ``true``/``false``/``null``."""
    out: list[str] = []
    index, quoted = 0, False
    while index < len(text):
        char = text[index]
        if quoted:
            out.append(char)
            if char == "\\":
                out.append(text[index + 1 : index + 2])
                index += 1
            elif char == '"':
                quoted = False
            index += 1
            continue
        if char == '"':
            quoted = True
        word = re.match(r"True|False|None", text[index:])
        if word and not (index and (text[index - 1].isalnum() or text[index - 1] == "_")):
            out.append(PYTHON_LITERALS[word.group(0)])
            index += len(word.group(0))
            continue
        out.append(char)
        index += 1
    return "".join(out)


def _balanced_end(text: str, start: int) -> int:
    """The end of the bracketed value opening at ``start`` (strings in either quote
    skipped), or -1 when it never closes."""
    depth, quote, index = 0, "", start
    while index < len(text):
        char = text[index]
        if quote:
            if char == "\\":
                index += 1
            elif char == quote:
                quote = ""
        elif char in "\"'":
            quote = char
        elif char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
            if depth == 0:
                return index + 1
        index += 1
    return -1
