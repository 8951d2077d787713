"""Model answers streamed: the idle timeout measures silence, and people see the text
as it is written.

Without streaming the HTTP read timeout is the whole answer's time, so a long answer
from a slow model is cut off as "idle" while it is still writing. Streamed, the read
timeout is the time between two chunks: ``idle_timeout`` is what it says. The chunks
are put back together with litellm's ``stream_chunk_builder`` into the one response
the router reads; ``on_text`` sees the text so far (at most every ``every`` seconds,
and "" once it is complete), for the unit page.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from agents_app.runtime.llm import complete, litellm_module

TextListener = Callable[[str], None]


def streamed_completion(
    *,
    idle_timeout: float,
    on_text: TextListener | None = None,
    every: float = 0.3,
    completion: Callable[..., Any] = complete,
    **request: Any,
) -> Any:
    """One completion asked with ``stream=True``, returned as a whole response."""
    stream = completion(stream=True, timeout=idle_timeout, **request)
    chunks: list[Any] = []
    text: list[str] = []
    shown = time.monotonic()
    for chunk in stream:
        chunks.append(chunk)
        piece = _text_of(chunk)
        if piece:
            text.append(piece)
            if on_text is not None and time.monotonic() - shown >= every:
                on_text("".join(text))
                shown = time.monotonic()
    if on_text is not None:
        on_text("")  # complete: the step itself is shown now
    return litellm_module().stream_chunk_builder(chunks, messages=request.get("messages"))


def _text_of(chunk: Any) -> str:
    choices = getattr(chunk, "choices", None) or []
    delta = getattr(choices[0], "delta", None) if choices else None
    return str(getattr(delta, "content", None) or "")
