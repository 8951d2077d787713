"""The chaos benchmark's model: a fake provider over real HTTP, faulty on a schedule.

The fake provider of the tests (``tests/fake_provider.py``: OpenAI's wire format,
streamed as server-sent events) answers from the conversation instead of a queue, so
any worker may ask it anything in any order: the first step of a unit writes the
task's file, the step after a tool result finishes. The fault driver switches a model
name into a fault for a while: 429 with ``retry-after``, 5xx, or a timeout (the stream
goes silent longer than the unit's idle timeout). Nothing else is simulated: litellm,
the router's waits, backoff and fallback, the provider outage pause all run for real.
"""

from __future__ import annotations

import json
import re
import threading
from collections import Counter
from typing import Any

from tests.fake_provider import (
    FakeProvider,
    Received,
    Reply,
    call,
    openai_calls,
    rate_limited,
    server_error,
)

PRIMARY = "chaos-primary"
FALLBACK = "chaos-fallback"
TASK_KEY = re.compile(r"^# Task (\S+):", re.MULTILINE)


class ChaosProvider(FakeProvider):
    def __init__(self, *, stall_s: float) -> None:
        super().__init__()
        self.stall_s = stall_s
        self.faults: dict[str, str] = {}  # model name → "429" | "5xx" | "timeout"
        self.answered: Counter[str] = Counter()  # "<model> <status>" → count
        self._lock = threading.Lock()

    def set_fault(self, models: tuple[str, ...], fault: str) -> None:
        with self._lock:
            for model in models:
                self.faults[model] = fault

    def clear(self) -> None:
        with self._lock:
            self.faults.clear()

    def next_reply(self, received: Received) -> Reply:
        # The tests' provider keeps every request for its assertions; this one only counts.
        model = str(received.body.get("model", ""))
        with self._lock:
            fault = self.faults.get(model, "")
        reply = _faulty(fault, self.stall_s) or _answer(received.body)
        if fault == "timeout":
            reply = Reply(reply.body, stall=self.stall_s, delay=0.0)
        with self._lock:
            self.answered[f"{model} {fault or reply.status}"] += 1
        return reply


def _faulty(fault: str, stall_s: float) -> Reply | None:
    if fault == "429":
        return rate_limited(retry_after=2)
    if fault == "5xx":
        return server_error(503)
    return None


def _answer(body: dict[str, Any]) -> Reply:
    """Write ``<key>.txt``; once a tool has answered, finish."""
    messages = body.get("messages") or []
    brief = next((str(m.get("content")) for m in messages if m.get("role") == "user"), "")
    match = TASK_KEY.search(brief)
    key = match.group(1) if match else "unknown"
    if any(m.get("role") == "tool" for m in messages):
        return openai_calls(call("finish", {"summary": f"wrote {key}.txt"}))
    content = json.dumps(key)[1:-1]
    return openai_calls(call("write_file", {"path": f"{key}.txt", "content": f"{content}\n"}))
