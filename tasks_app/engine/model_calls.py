"""A unit's model calls: streamed to the unit page, cut at the idle and hard timeouts,
with the "waiting for the model" state (``tasks_app.waiting``) kept around each request."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from django.conf import settings

from agents_app.gate.redaction import redact_text
from agents_app.runtime.llm import complete
from agents_app.runtime.streaming import streamed_completion
from sf_core.live import Groups, broadcast
from tasks_app.waiting import model_request_answered, model_request_sent, prompt_tokens

STREAM_SHOWN = 4000  # characters of a step being written that the unit page shows


def streamed(
    task_id: int, unit_id: int, deadline: float, cut: threading.Event | None = None
) -> Callable[..., Any]:
    """Streamed: the idle timeout is the silence between two chunks, not the answer's
    whole time; the text so far goes to the unit page, redacted like everything shown.
    An answer still being written at the unit's hard timeout is cut off there. Until
    its first words arrive the page says the model is being waited for (``waiting``)."""
    group = Groups.unit(unit_id)
    waiting = [False]

    def show(text: str) -> None:
        if waiting[0]:
            waiting[0] = False
            model_request_answered(task_id=task_id, unit_id=unit_id)
        # The last word may be half a key still arriving: it waits until it is whole,
        # so the redaction sees every secret entire.
        whole = text[: max(text.rfind(" "), text.rfind("\n")) + 1]
        broadcast(group, "unit.streaming", text=redact_text(whole[-STREAM_SHOWN:]))

    def completion(**kwargs: Any) -> Any:
        idle = settings.SF_UNIT_IDLE_TIMEOUT.total_seconds()
        tokens = prompt_tokens(kwargs)
        waiting[0] = True
        model_request_sent(task_id=task_id, unit_id=unit_id, tokens=tokens)
        try:
            return streamed_completion(
                idle_timeout=idle, on_text=show, deadline=deadline, cut=cut, **kwargs
            )
        finally:
            if waiting[0]:
                waiting[0] = False
                model_request_answered(task_id=task_id, unit_id=unit_id)

    return completion


def with_idle_timeout(**kwargs: Any) -> Any:
    """A model call that produces nothing for the idle timeout is abandoned. The router
    retries (and tells the other workers of a 429), not the provider's client."""
    return complete(timeout=settings.SF_UNIT_IDLE_TIMEOUT.total_seconds(), max_retries=0, **kwargs)
