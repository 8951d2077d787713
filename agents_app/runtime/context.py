"""Keeping the conversation inside the model's context window.

Before each model step the loop asks ``fit_messages`` whether the conversation plus the
answer (``max_tokens``) fits the window, with a margin because litellm's counter is not
the server's tokenizer (unknown models are counted with tiktoken). When it does not, old
tool outputs are replaced by a short stub saying what was cut and how to see it again,
oldest first; then the long string arguments of old tool calls (a whole file written),
then old answers' text. Never cut: system messages, the task brief (the first user
message), and the last ``KEEP_RECENT_STEPS`` steps (an assistant turn with the tool
results after it) — unless nothing else is left, when only the latest step is kept. No
message is removed and no call id changes, so every tool call keeps its result, as
providers require. When even that does not fit, ``Fit.problem`` says why and the loop
ends the unit.

The window: a configured value (``SF_MODEL_<MODE>_CONTEXT_WINDOW``, a project's
``models.<mode>.context_window``) wins, else litellm's ``max_input_tokens`` for the
model, else ``DEFAULT_CONTEXT_WINDOW``. When a provider still refuses a request as too
long, its own limit (from the error text, scaled down when it counted more tokens than
litellm did) and a wider margin are used for one retry.

Pure functions on message lists: the token counter is passed in (``token_count`` is
litellm's, imported lazily).
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeGuard

DEFAULT_CONTEXT_WINDOW = 8192
KEEP_RECENT_STEPS = 3
MARGIN = 0.05  # of the window, for tokenizers that count more than litellm's
HARDER_MARGIN = 0.15  # after the provider refused a request as too long
WORTH_CUTTING = 300  # characters: shorter text is left alone (a stub is ~150)
STUB_MARK = "[SF] "
SUBJECT_KEYS = ("path", "command", "pattern", "name", "query", "url")

Message = dict[str, Any]
Counter = Callable[[list[Message]], int]
Cut = tuple[str, int]  # what was cut (for the trace) and how many characters
NOTHING: Cut = ("", 0)


@dataclass
class Fit:
    messages: list[Message]
    tokens: int  # the prompt as counted after the cuts
    limit: int  # what the prompt may use: window - max_tokens - margin
    window: int
    cuts: list[str] = field(default_factory=list)  # what was cut, for the trace
    cut_chars: int = 0
    problem: str = ""  # why it cannot fit ("" when it fits)

    @property
    def fits(self) -> bool:
        return not self.problem

    def note(self) -> str:
        """One line for the trace: what was cut to fit."""
        return (
            f"context: cut {len(self.cuts)} old part(s) ({self.cut_chars:,} chars) to fit the "
            f"{self.window:,}-token window; prompt now {self.tokens:,} tokens"
        )


def context_window(model: str, configured: int = 0) -> int:
    """The model's input window in tokens: configured, else litellm's, else the default."""
    if configured > 0:
        return configured
    return known_window(model) or DEFAULT_CONTEXT_WINDOW


def known_window(model: str) -> int:
    """litellm's ``max_input_tokens`` for ``model``; 0 when litellm does not know it."""
    from agents_app.runtime.llm import litellm_module

    try:
        info = litellm_module().get_model_info(model)
    except Exception:  # litellm raises for models it has not mapped
        return 0
    return int(info.get("max_input_tokens") or 0)


def token_count(model: str, messages: list[Message], tools: list[dict[str, Any]]) -> int:
    """litellm's count of the prompt: the messages and the tool specs."""
    from agents_app.runtime.llm import litellm_module

    return int(litellm_module().token_counter(model=model, messages=messages, tools=tools or None))


_LIMIT_PATTERNS = (
    re.compile(r"maximum context length is ([\d,]+)", re.IGNORECASE),  # OpenAI, vLLM
    re.compile(r"tokens > ([\d,]+) maximum", re.IGNORECASE),  # Anthropic
    re.compile(r"context (?:size|window|length)[^\d]{0,20}([\d,]+) tokens", re.IGNORECASE),
    re.compile(r"n_ctx\W{0,4}(\d+)", re.IGNORECASE),  # llama.cpp's error body
)
_ASKED_PATTERNS = (
    re.compile(r"resulted in ([\d,]+) tokens", re.IGNORECASE),  # OpenAI, vLLM
    re.compile(r"too long: ([\d,]+) tokens", re.IGNORECASE),  # Anthropic
    re.compile(r"n_prompt_tokens\W{0,4}(\d+)", re.IGNORECASE),  # llama.cpp
)


def provider_limit(message: str) -> int:
    """The window a provider's context-length error names (0 when it names none)."""
    return _first_number(_LIMIT_PATTERNS, message)


def provider_asked(message: str) -> int:
    """The tokens a provider counted in the refused request (0 when it does not say)."""
    return _first_number(_ASKED_PATTERNS, message)


def refused_window(window: int, message: str, counted: int) -> int:
    """The window to fit after a provider refused a request we counted as ``counted``
    tokens: its own limit, scaled down when it counted more than we do (its tokenizer)."""
    limit = provider_limit(message)
    window = min(window, limit) if limit else window
    asked = provider_asked(message)
    if asked > counted > 0:
        window = window * counted // asked
    return window


def _first_number(patterns: tuple[re.Pattern[str], ...], message: str) -> int:
    for pattern in patterns:
        found = pattern.search(message)
        if found:
            return int(found.group(1).replace(",", ""))
    return 0


def fit_messages(
    messages: list[Message],
    *,
    count: Counter,
    window: int,
    max_tokens: int,
    margin: float = MARGIN,
    keep_steps: int = KEEP_RECENT_STEPS,
) -> Fit:
    """``messages`` (a copy when anything is cut) within ``window`` with room for the
    answer; ``Fit.problem`` says why not when even cutting all it may does not do."""
    limit = window - max_tokens - int(window * margin)
    fit = Fit(messages=messages, tokens=count(messages), limit=limit, window=window)
    if fit.tokens <= limit:
        return fit
    if limit <= 0:
        fit.problem = (
            f"the answer's max_tokens ({max_tokens:,}) leaves no room for the conversation in "
            f"the model's {window:,}-token context window: lower SF_MODEL_MAX_TOKENS or set the "
            "window (SF_MODEL_<MODE>_CONTEXT_WINDOW, or context_window in the project's models)"
        )
        return fit
    fit.messages = copy.deepcopy(messages)
    for keep in dict.fromkeys((keep_steps, 1)):  # the last few steps; at worst the latest
        if _cut_until_fit(fit, count, keep):
            return fit
    fit.problem = (
        f"the conversation needs {fit.tokens:,} tokens even with old tool outputs cut, but the "
        f"model's {window:,}-token context window leaves {limit:,} for it beside the answer "
        f"(max_tokens {max_tokens:,}): the task brief, the tools and the latest step are too long"
    )
    return fit


def _cut_until_fit(fit: Fit, count: Counter, keep_steps: int) -> bool:
    """Cut the oldest parts outside the protected ones until the prompt fits."""
    messages = fit.messages
    protected = _protected(messages, keep_steps)
    calls = _calls_by_id(messages)
    cutters: tuple[Callable[[Message], Cut], ...] = (
        lambda m: _cut_tool_output(m, calls),
        _cut_call_arguments,
        _cut_answer_text,
    )
    for cutter in cutters:
        for index, message in enumerate(messages):
            if index in protected:
                continue
            original = copy.deepcopy(message)
            what, chars = cutter(message)
            if not what:
                continue
            fit.cuts.append(what)
            fit.cut_chars += chars
            fit.tokens -= max(0, count([original]) - count([message]))
            if fit.tokens <= fit.limit:
                fit.tokens = count(messages)  # the estimate, checked
                if fit.tokens <= fit.limit:
                    return True
    fit.tokens = count(messages)
    return fit.tokens <= fit.limit


def _protected(messages: list[Message], keep_steps: int) -> set[int]:
    """System messages, the task brief, and everything from the last ``keep_steps``
    assistant turns on."""
    protected = {i for i, m in enumerate(messages) if m.get("role") == "system"}
    brief = next((i for i, m in enumerate(messages) if m.get("role") == "user"), None)
    if brief is not None:
        protected.add(brief)
    turns = [i for i, m in enumerate(messages) if m.get("role") == "assistant"]
    start = turns[-keep_steps] if len(turns) >= keep_steps else (turns[0] if turns else 0)
    protected.update(range(start, len(messages)))
    return protected


def _calls_by_id(messages: list[Message]) -> dict[str, tuple[str, str]]:
    """Each tool call id → (tool name, arguments text)."""
    calls = {}
    for message in messages:
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            calls[str(call.get("id"))] = (
                str(function.get("name") or "a tool"),
                str(function.get("arguments") or ""),
            )
    return calls


def _cut_tool_output(message: Message, calls: dict[str, tuple[str, str]]) -> Cut:
    content = message.get("content")
    if message.get("role") != "tool" or not _worth_cutting(content):
        return NOTHING
    name, arguments = calls.get(str(message.get("tool_call_id")), ("a tool", ""))
    subject = _subject(arguments)
    what = f"output of {name}{' ' + subject if subject else ''}, {len(content):,} chars"
    message["content"] = f"{STUB_MARK}{what}, cut to save context; call the tool again to see it"
    return what, len(content)


def _cut_call_arguments(message: Message) -> Cut:
    """Long string values in an old call's arguments (the arguments stay valid JSON)."""
    cut: list[str] = []
    chars = 0
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        text = function.get("arguments") or "{}"
        try:
            arguments = json.loads(text)
        except json.JSONDecodeError:
            arguments = None
        if not isinstance(arguments, dict):  # malformed, already answered as such
            if _worth_cutting(text):
                cut.append(f"arguments of {function.get('name')}, {len(text):,} chars")
                chars += len(text)
                function["arguments"] = "{}"
            continue
        long = [key for key, value in arguments.items() if _worth_cutting(value)]
        for key in long:
            size = len(arguments[key])
            arguments[key] = f"{STUB_MARK}{size:,} chars cut to save context"
            cut.append(f"{key} of {function.get('name')}, {size:,} chars")
            chars += size
        if long:
            function["arguments"] = json.dumps(arguments, ensure_ascii=False)
    return "; ".join(cut), chars


def _cut_answer_text(message: Message) -> Cut:
    content = message.get("content")
    if message.get("role") != "assistant" or not _worth_cutting(content):
        return NOTHING
    what = f"an earlier answer's text, {len(content):,} chars"
    message["content"] = f"{STUB_MARK}{what}, cut to save context"
    return what, len(content)


def _worth_cutting(text: object) -> TypeGuard[str]:
    return isinstance(text, str) and len(text) > WORTH_CUTTING and not text.startswith(STUB_MARK)


def _subject(arguments: str) -> str:
    """What a call was about (its path, command …), short, for the stub."""
    try:
        values = json.loads(arguments or "{}")
    except json.JSONDecodeError:
        return ""
    if not isinstance(values, dict):
        return ""
    for key in SUBJECT_KEYS:
        if isinstance(values.get(key), str) and values[key].strip():
            text = " ".join(values[key].split())
            return text if len(text) <= 80 else text[:77] + "..."
    return ""
