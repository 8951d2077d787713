"""Model answers streamed: the idle timeout measures silence, and people see the text
as it is written.

Without streaming the HTTP read timeout is the whole answer's time, so a long answer
from a slow model is cut off as "idle" while it is still writing. Streamed, the read
timeout is the time between two chunks: ``idle_timeout`` is what it says. The chunks
are put back together with litellm's ``stream_chunk_builder`` into the one response
the router reads; ``on_text`` sees the text so far (at most every ``every`` seconds,
and "" once it is complete), for the unit page.

A unit's hard timeout is checked between steps; a slow model writing steadily up to
``max_tokens`` (on two busy cores, a 1.5B model at 1-2 tokens/s: most of an hour) would
hold the unit far past it. ``deadline`` ends the answer there: what arrived is returned
as an answer cut off (``finish_reason`` "length"), and the unit stops at its next step.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from functools import partial
from typing import Any

from django.db import connections

from agents_app.runtime.llm import AnswerCut, complete, litellm_module

TextListener = Callable[[str], None]
CUT_POLL = 0.1  # seconds between looks at ``cut`` while the answer is awaited


def streamed_completion(
    *,
    idle_timeout: float,
    on_text: TextListener | None = None,
    every: float = 0.3,
    deadline: float | None = None,
    clock: Callable[[], float] = time.monotonic,
    completion: Callable[..., Any] = complete,
    cut: threading.Event | None = None,
    **request: Any,
) -> Any:
    """One completion asked with ``stream=True``, returned as a whole response; cut off
    at ``deadline`` (a ``clock`` reading) if it is still being written then.

    With ``cut``, the request runs in a thread of its own and this returns at once when
    ``cut`` is set, raising ``AnswerCut``: while the model still reads the prompt no byte
    arrives to wake a reading thread, so the caller never waits for one. The thread
    hangs up on the server as soon as it holds the stream (the server stops writing)."""
    ask = partial(_stream, idle_timeout, on_text, every, deadline, clock, completion, cut, request)
    if cut is None:
        return ask()
    outcome: dict[str, Any] = {}
    done = threading.Event()

    def run() -> None:
        try:
            outcome["response"] = ask()
        except BaseException as exc:  # handed to the caller's thread below
            outcome["error"] = exc
        finally:
            done.set()
            connections.close_all()  # this thread's (a live update's commit hook opens one)

    threading.Thread(target=run, name="sf-model-answer", daemon=True).start()
    while not done.wait(CUT_POLL):
        if cut.is_set():
            raise AnswerCut("the model's answer was cut: the unit was cancelled")
    if "error" in outcome:
        raise outcome["error"]
    return outcome["response"]


def _stream(
    idle_timeout: float,
    on_text: TextListener | None,
    every: float,
    deadline: float | None,
    clock: Callable[[], float],
    completion: Callable[..., Any],
    cut: threading.Event | None,
    request: dict[str, Any],
) -> Any:
    if _usage_asked(str(request.get("model", ""))):
        # OpenAI-compatible servers report a streamed answer's tokens only when asked:
        # without it every streamed step was recorded as 0 tokens, and cost $0.
        request.setdefault("stream_options", {"include_usage": True})
    stream = completion(stream=True, timeout=idle_timeout, **request)
    chunks: list[Any] = []
    text: list[str] = []
    shown = clock()
    ended = False
    for chunk in stream:
        if cut is not None and cut.is_set():
            _close(stream)
            raise AnswerCut("the model's answer was cut: the unit was cancelled")
        chunks.append(chunk)
        piece = _text_of(chunk)
        if piece:
            text.append(piece)
            if on_text is not None and clock() - shown >= every:
                on_text("".join(text))
                shown = clock()
        if deadline is not None and clock() >= deadline:
            ended = True
            break
    if ended:
        _close(stream)
    if on_text is not None:
        on_text("")  # complete: the step itself is shown now
    response = litellm_module().stream_chunk_builder(chunks, messages=request.get("messages"))
    if ended and response is not None and response.choices:
        response.choices[0].finish_reason = "length"
    return response


def _usage_asked(model: str) -> bool:
    """Whether the provider takes ``stream_options`` (OpenAI and compatible servers do;
    Anthropic and Gemini stream their usage anyway, and litellm refuses the option)."""
    try:
        supported = litellm_module().get_supported_openai_params(model=model) or []
    except Exception:  # a model litellm cannot place: ask nothing extra
        return False
    return "stream_options" in supported


def _close(stream: Any) -> None:
    """Hang up on the server (it stops writing when the connection goes), whatever the
    stream wraps: litellm's wrapper keeps the provider's response in ``completion_stream``."""
    for part in (stream, getattr(stream, "completion_stream", None)):
        close = getattr(part, "close", None)
        if callable(close):
            with contextlib.suppress(Exception):  # a connection already gone
                close()


def _text_of(chunk: Any) -> str:
    choices = getattr(chunk, "choices", None) or []
    delta = getattr(choices[0], "delta", None) if choices else None
    return str(getattr(delta, "content", None) or "")
