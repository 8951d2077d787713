"""The agent loop: model step, tool calls through the gate, until it stops.

It stops on ``finish``, the step limit, the budget limit, a blocking decision (an
``ask`` of the gate or an unanswered ``ask_user``), or an interrupt from its hooks
(pause, stop, timeouts). A malformed tool call is answered with the validation
error and the loop goes on: the model's mistakes never crash a unit.

Before each model step the conversation is fitted to the model's context window
(``context``: old tool outputs cut to stubs); when the provider still refuses it as too
long, it is cut harder and asked once more. A conversation that cannot fit ends the
unit (``context_full``) with the reason, never a provider failure.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from decimal import Decimal
from enum import StrEnum
from typing import Any, Protocol

from django.utils import timezone
from pydantic import BaseModel, ValidationError

import sf_native
from agents_app.gate.contract import Gate, GateVerdict, StaleReading
from agents_app.gate.redaction import redact_payload, redact_text
from agents_app.models import TraceKind
from agents_app.runtime.context import (
    HARDER_MARGIN,
    MARGIN,
    context_window,
    fit_messages,
    refused_window,
    token_count,
)
from agents_app.runtime.llm import (
    AnswerCut,
    ContextWindowExceeded,
    ModelRouter,
    ModelStep,
    ToolCallRequest,
)
from agents_app.runtime.model_settings import PromptProfile, ToolCallStyle
from agents_app.runtime.project_hooks import ProjectHooks
from agents_app.runtime.replay import Replay
from agents_app.runtime.textcalls import ONE_CALL, recognise_step, step_note
from agents_app.runtime.tool_specs import compact_spec
from agents_app.runtime.tools import (
    Finished,
    NeedsPerson,
    Tool,
    ToolContext,
    ToolError,
    call_help,
)
from agents_app.runtime.trace import TraceRecorder
from agents_app.runtime.truncation import call_cut_message, cut_off, text_cut_message
from agents_app.runtime.wire import append_note, well_formed_calls

# The room kept for an answer while fitting the conversation; each request then asks
# for what the window has left, up to the model's max_tokens (``ModelRouter``).
ANSWER_RESERVE = 1024
STALE_READINGS = 3  # dispatch points in a row whose reading of the session was stale
NUDGE = "Continue with the tools. When every acceptance criterion is met, call finish."
MAX_TEXT_ONLY_STEPS = 3
# Answers in a row in which no call could run, counting the recognised calls refused with
# help (an unknown tool, a missing argument): a model that is correcting itself gets
# more tries than one that answers in prose, but not the whole step limit.
MAX_IDLE_STEPS = 6
# The corrected example the last prose answer before giving up is shown (text styles).
EXAMPLE_CALLS = (
    '```json\n{"name": "read_file", "arguments": {"path": "README.md"}}\n```\n'
    "and, once every acceptance criterion is met:\n"
    '```json\n{"name": "finish", "arguments": {"summary": "what changed and why"}}\n```'
)


class Outcome(StrEnum):
    FINISHED = "finished"
    STEP_LIMIT = "step_limit"
    BUDGET = "budget"
    BLOCKED = "blocked"  # a gate decision waits for a person
    NEEDS_PERSON = "needs_person"  # ask_user without an answer
    INTERRUPTED = "interrupted"  # paused, stopped or timed out by the hooks
    NO_PROGRESS = "no_progress"  # the model keeps answering without tools
    CONTEXT_FULL = "context_full"  # the conversation cannot fit the model's context window


class Hooks(Protocol):
    """The engine's say in the loop: heartbeats, steering, pause/stop, timeouts and
    stuck detection. Each returns None to go on, or the reason to stop."""

    def before_model(self) -> str | None: ...

    def notes(self) -> list[str]:
        """Messages for the model before its next step (wrap up, a diagnostic)."""

    def before_tool(self, tool: str) -> str | None: ...

    def after_tool(self, tool: str, input_hash: str) -> str | None: ...


@dataclass
class LoopResult:
    outcome: Outcome
    summary: str = ""
    steps: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost: Decimal = Decimal("0")
    decision_id: int | None = None
    question: str = ""
    detail: str = ""
    model: str = ""
    # Blocked on a call waiting for approval: the conversation and the calls to make
    # once approved (``AgentLoop._calls``).
    resume: dict[str, Any] | None = None


@dataclass
class AgentLoop:
    router: ModelRouter
    tools: dict[str, Tool]
    context: ToolContext
    gate: Gate
    recorder: TraceRecorder
    hooks: Hooks
    max_steps: int = 40
    budget: Decimal | None = None  # what this unit may still spend
    # Asked, once the budget is spent, for a larger one (None: there is no more); the
    # engine reserves it from the session's unreserved remainder.
    budget_more: Callable[[Decimal], Decimal | None] | None = None
    replay: Replay | None = None
    # Calls to make before the first model step: a resumed conversation's approved call.
    pending: list[ToolCallRequest] = field(default_factory=list)
    # The project's hooks (docs/hooks.md): at the start, around each call, at finish.
    triggers: ProjectHooks = field(default_factory=ProjectHooks)
    clock: Callable[[], float] = time.monotonic
    result: LoopResult = field(init=False)
    # The next answer's max_tokens: what the window leaves beside the fitted prompt.
    answer_room: int = field(init=False, default=0)

    def run(self, messages: list[dict[str, Any]]) -> LoopResult:
        self.result = LoopResult(outcome=Outcome.STEP_LIMIT, model=self.router.model)
        self.triggers.start(self.context)
        # A resumed conversation first makes the calls it stopped at (the approved one).
        ended = self._calls(self.pending, messages, set()) if self.pending else None
        if ended is not None:
            return ended
        text_only = idle = 0
        while self.result.steps < self.max_steps:
            stop = self.hooks.before_model()
            if stop:
                return self._end(Outcome.INTERRUPTED, detail=stop)
            for note in [*self.hooks.notes(), *self.triggers.notes()]:
                append_note(messages, note)
            try:
                step = self._fitted_step(messages)
            except AnswerCut as answer_cut:  # the hooks' stop, seen while the model answered
                return self._end(Outcome.INTERRUPTED, detail=str(answer_cut))
            if isinstance(step, str):
                return self._end(Outcome.CONTEXT_FULL, detail=step)
            # Over it, not at it: a budget may be spent in full, and a model that costs
            # nothing (a local one) never exceeds even a budget of $0.
            if self.budget is not None and self.result.cost > self.budget and not self._more():
                return self._end(
                    Outcome.BUDGET, detail=f"spent ${self.result.cost} of ${self.budget}"
                )
            if not step.tool_calls:
                idle += 1
                text_only += not step.correctable
                if text_only >= MAX_TEXT_ONLY_STEPS or idle >= MAX_IDLE_STEPS:
                    return self._end(Outcome.NO_PROGRESS, detail=_idle_detail(idle, step))
                last_try = text_only == MAX_TEXT_ONLY_STEPS - 1 and not step.correctable
                append_note(messages, step.refusal or self._text_note(step, last_try))
                continue
            text_only = idle = 0
            cut = cut_off(step.tool_calls) if step.finish_reason == "length" else set()
            ended = self._calls(step.tool_calls, messages, cut)
            if ended is not None:
                return ended
            if step.note:
                append_note(messages, step.note)
        return self._end(Outcome.STEP_LIMIT, detail=f"{self.max_steps} model steps")

    def _calls(
        self, calls: list[ToolCallRequest], messages: list[dict[str, Any]], cut: set[str]
    ) -> LoopResult | None:
        """Make one answer's calls in order; the result if one ends the loop. A call that
        waits for approval keeps the conversation before it and the calls from it on
        (``LoopResult.resume``): once approved, the next attempt goes on from there."""
        for index, call in enumerate(calls):
            if call.id in cut:
                note = call_cut_message(call, self._answer_tokens())
                self._answer(call, messages, note, timezone.now())
                continue
            ended = self._tool_call(call, messages)
            if ended is not None:
                if ended.outcome == Outcome.BLOCKED:
                    ended.resume = {
                        "messages": messages[:-1],  # not its "waiting for approval" answer
                        "calls": [asdict(later) for later in calls[index:]],
                        "decision_id": ended.decision_id,
                    }
                return ended
        return None

    def _text_note(self, step: ModelStep, last_try: bool = False) -> str:
        """What a model that answered without a call is told; before its last try (text
        styles), a call written right to copy."""
        if step.finish_reason == "length":
            return text_cut_message(self._answer_tokens())
        if self.router.tool_calls == ToolCallStyle.NATIVE:
            return NUDGE
        if last_try:
            return f"{NUDGE} {ONE_CALL} For example:\n{EXAMPLE_CALLS}"
        return f"{NUDGE} {ONE_CALL}"

    def _offered_specs(self) -> list[dict[str, Any]]:
        specs = [
            self.tools[name].openai_spec()
            for name in self.gate.offered_tools()
            if name in self.tools
        ]
        if self.router.prompt_profile == PromptProfile.COMPACT:
            return [compact_spec(spec) for spec in specs]
        return specs

    def _fitted_step(self, messages: list[dict[str, Any]]) -> ModelStep | str:
        """The next model step, the conversation fitted to the context window first; the
        reason instead when it cannot fit. A replay's conversation is left as recorded."""
        if self.replay is not None:
            return self._model_step(messages)
        problem = self._fit(messages)
        if problem:
            return problem
        try:
            return self._model_step(messages)
        except ContextWindowExceeded as refused:
            self.router.notes.append(f"context: the provider refused the request: {refused}")
            problem = self._fit(messages, refused.provider_text)
            if problem:
                return problem
        try:
            return self._model_step(messages)
        except ContextWindowExceeded as again:
            return f"the conversation does not fit the model's context window even cut: {again}"

    def _fit(self, messages: list[dict[str, Any]], refused: str = "") -> str:
        """Cut old parts of ``messages`` (in place) to fit; the reason when they cannot.
        ``refused``: the provider's words refusing them as too long (its limit, its count)."""
        window = context_window(self.router.model, self.router.context_window)
        offered = self._offered_specs()

        def count(shown: list[dict[str, Any]]) -> int:
            return token_count(self.router.model, shown, offered)

        if refused:
            window = refused_window(window, refused, count(messages))
        margin = HARDER_MARGIN if refused else MARGIN
        fit = fit_messages(
            messages,
            count=count,
            window=window,
            max_tokens=min(self.router.max_tokens, ANSWER_RESERVE),
            margin=margin,
        )
        if fit.cuts:
            messages[:] = fit.messages
            self.router.notes.append(fit.note())
        self.answer_room = window - fit.tokens - int(window * margin)
        return fit.problem

    def _answer_tokens(self) -> int:
        """The max_tokens the last request asked for."""
        return min(self.router.max_tokens, self.answer_room or self.router.max_tokens)

    def _more(self) -> bool:
        """Whether the budget grew past what was spent (``budget_more``)."""
        grown = self.budget_more(self.result.cost) if self.budget_more else None
        if grown is None or grown < self.result.cost:
            return False
        self.budget = grown
        return True

    def _model_step(self, messages: list[dict[str, Any]]) -> ModelStep:
        started = timezone.now()
        step = self.router.step(
            messages, self._offered_specs(), max_tokens=self.answer_room or None
        )
        if self.router.tool_calls != ToolCallStyle.NATIVE:
            step = recognise_step(step, self.tools, self.gate.offered_tools())
            if step.from_text or step.refusal:
                self.router.notes.append(step_note(step))
        if step.message is not None:
            messages.append(redact_payload(well_formed_calls(step.message)))
        self.result.steps += 1
        self.result.tokens_in += step.tokens_in
        self.result.tokens_out += step.tokens_out
        self.result.cost += step.cost
        self.result.model = step.model
        self.recorder.model_call(
            step,
            payload={
                "content": step.content,
                "tool_calls": [
                    {"id": c.id, "name": c.name, "arguments": c.arguments} for c in step.tool_calls
                ],
                "notes": list(self.router.notes),
            },
            started_at=started,
        )
        self.router.notes.clear()
        return step

    def _tool_call(
        self, call: ToolCallRequest, messages: list[dict[str, Any]]
    ) -> LoopResult | None:
        started = timezone.now()
        parsed = self._parse_call(call, messages, started)
        if parsed is None:
            return None
        tool, arguments = parsed
        values = arguments.model_dump()
        # Worktree-relative and whitespace-stable: a replay elsewhere hashes the same.
        normalized = self.gate.normalize(call.name, values)
        # Hashed as stored (redacted): a recording that held a secret replays.
        normalized = redact_payload(normalized)
        input_hash = sf_native.canonical_hash({"tool": call.name, "input": normalized})
        if self.replay is not None:
            self.replay.expect_tool_call(call.name, input_hash, normalized)
        # The dispatch point comes before the gate: a /stop ends the unit here (rather
        # than the gate asking a person about a call nobody wants any more), and the
        # steering due now is applied before the gate decides under the axes.
        stop, verdict = self._dispatch(call.name, values, input_hash)
        if stop or verdict is None:
            return self._end(Outcome.INTERRUPTED, detail=stop)

        def answer(output: str) -> None:
            self._answer(call, messages, output, started, input_hash, normalized, verdict)

        if verdict.decision == "deny":
            answer(f"denied by {verdict.rule}: {verdict.reason}")
            return None
        if verdict.decision == "ask":
            answer(f"waiting for approval ({verdict.rule})")
            return self._end(
                Outcome.BLOCKED, decision_id=verdict.decision_id, detail=verdict.reason
            )
        # The tool runs outside any transaction (a command may take minutes); its trace
        # row commits on its own, without waiting for the disk (``TraceRecorder``).
        ended = self._run_tool(tool, arguments, answer, normalized)
        if ended is not None:
            return ended
        stop = self.hooks.after_tool(call.name, input_hash)
        if stop:
            return self._end(Outcome.INTERRUPTED, detail=stop)
        return None

    def _dispatch(
        self, tool: str, values: dict[str, Any], input_hash: str
    ) -> tuple[str | None, GateVerdict | None]:
        """The hooks' say (a reason to stop), then the gate's decision, at a tool call's
        dispatch point. A stale reading stored nothing: both are asked again, the hooks
        reading the session afresh (and applying the steering due), the gate deciding on
        that; a session that changes under every try ends the unit with the error."""
        for _ in range(STALE_READINGS - 1):
            try:
                return self._dispatch_once(tool, values, input_hash)
            except StaleReading:
                continue
        return self._dispatch_once(tool, values, input_hash)

    def _dispatch_once(
        self, tool: str, values: dict[str, Any], input_hash: str
    ) -> tuple[str | None, GateVerdict | None]:
        stop = self.hooks.before_tool(tool)
        if stop:
            return stop, None
        return None, self.gate.check(tool, values, input_hash)

    def _parse_call(
        self, call: ToolCallRequest, messages: list[dict[str, Any]], started: Any
    ) -> tuple[Tool, BaseModel] | None:
        """The tool and its validated arguments; otherwise the model is told what is
        wrong (an unknown or hidden tool, arguments that do not fit) and None returned."""
        tool = self.tools.get(call.name)
        if tool is None or call.name not in self.gate.offered_tools():
            available = ", ".join(self.gate.offered_tools())
            self._answer(
                call, messages, f"unknown tool {call.name!r}; available: {available}", started
            )
            return None
        try:
            arguments = json.loads(call.arguments)
            if not isinstance(arguments, dict):
                raise ValueError("arguments must be a JSON object")
            return tool, tool.parse(arguments)
        except (ValueError, TypeError) as exc:
            message = (
                call_help(tool, arguments, exc)
                if isinstance(exc, ValidationError)
                else (f"invalid arguments for {call.name}: {exc}{_json_hint(call, exc)}")
            )
            self._answer(call, messages, message, started)
            return None

    def _run_tool(
        self,
        tool: Tool,
        arguments: BaseModel,
        answer: Callable[[str], None],
        normalized: dict[str, Any],
    ) -> LoopResult | None:
        """Run an allowed call and answer the model; a loop-ending tool ends the loop.
        The project's hooks may block the call, or the finish (``project_hooks``)."""
        blocked = self.triggers.before(self.context, tool.name, normalized)
        if blocked:
            answer(blocked)
            return None
        try:
            output = tool.run(self.context, arguments)
        except Finished as done:
            refused = self.triggers.stop(self.context, done.summary)
            if refused:
                answer(refused)
                return None
            answer("finished")
            return self._end(Outcome.FINISHED, summary=done.summary)
        except NeedsPerson as asked:
            answer("waiting for an answer")
            return self._end(Outcome.NEEDS_PERSON, question=asked.question)
        except (ToolError, OSError, ValueError) as exc:
            output = f"error: {exc}"
        answer(output)
        self.triggers.after(self.context, tool.name, normalized, output)
        return None

    def _answer(
        self,
        call: ToolCallRequest,
        messages: list[dict[str, Any]],
        output: str,
        started: Any,
        input_hash: str = "",
        normalized: dict[str, Any] | None = None,
        verdict: GateVerdict | None = None,
    ) -> None:
        """Give the model the tool's result (redacted) and trace the call."""
        redacted = redact_text(output)
        messages.append({"role": "tool", "tool_call_id": call.id, "content": redacted})
        payload: dict[str, Any] = {
            "arguments": normalized if normalized is not None else call.arguments,
            "output": redacted,
        }
        if verdict is not None:
            payload["decision"] = {
                "decision": verdict.decision,
                "rule": verdict.rule,
                "risk_class": verdict.risk_class,
            }
        self.recorder.record(
            TraceKind.TOOL_CALL,
            name=call.name,
            payload=payload,
            input_hash=input_hash,
            started_at=started,
        )
        return None

    def _end(self, outcome: Outcome, **values: Any) -> LoopResult:
        self.result.outcome = outcome
        for name, value in values.items():
            setattr(self.result, name, value)
        return self.result


def _idle_detail(idle: int, step: ModelStep) -> str:
    """Plain words, not the model's text: a retry's brief quotes this, and a model shown
    its own malformed answer writes it again."""
    detail = f"{idle} answers in a row without a tool call that could run"
    if step.refusal:
        detail += f"; the last was refused: {step.refusal}"
    return detail[:500]


def _json_hint(call: ToolCallRequest, exc: Exception) -> str:
    """Where arguments that are not JSON went wrong, and what they must be instead."""
    if not isinstance(exc, json.JSONDecodeError):
        return ""
    near = call.arguments[max(0, exc.pos - 30) : exc.pos + 10]
    return (
        f", near {near!r}; nothing was run. Send the arguments as one JSON object, "
        'strings quoted and escaped (\\n for a newline, \\" for a quote)'
    )
