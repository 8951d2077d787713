"""A fake model provider over real HTTP, for tests that must run litellm's conversion.

``FakeProvider`` is an ``http.server`` on 127.0.0.1 in a thread (the standard library:
nothing to install, and a blocking handler makes server-sent events a loop of writes).
It speaks OpenAI-compatible ``POST /v1/chat/completions`` (with ``stream: true`` as
SSE, tool-call arguments in deltas) and Anthropic ``POST /v1/messages``. litellm reaches
it through ``api_base`` — ``openai/<name>`` with ``provider.openai_base``,
``anthropic/<name>`` with ``provider.anthropic_base`` — so the request conversion runs
for real and the tests assert on the JSON the provider received (``provider.requests``).

Each test scripts the answers: ``provider.answer(reply, …)`` queues them, one per
request, in order. ``parses_arguments = True`` makes it a server that parses the tool-call
arguments of the history it is sent, as some OpenAI-compatible servers do (SGLang's
router): arguments that are not JSON get a 500 (in llama.cpp's error shape) without
using up a scripted answer. A request with nothing queued gets a 400 saying so, so a test that
expected fewer calls fails loudly. The builders below make the real-world quirks:
``finish_reason: length``, ``content: null``, missing or null tool-call ids, parallel
calls, 429 with ``retry-after``, 5xx, a context-length error body, malformed tool-call
JSON, a refused JSON schema, Anthropic thinking blocks.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from tests.fake_provider_sse import anthropic_events, openai_chunks

MISSING = object()  # a tool-call id left out of the JSON altogether


@dataclass
class Reply:
    """One scripted answer: a status, a JSON body, headers, and an optional delay."""

    body: dict[str, Any]
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    chunk_delay: float = 0.0  # streamed: a pause before each chunk (a model still writing)
    stall: float = 0.0  # streamed: silence after the first chunk (a server that hangs)


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


class FakeProvider:
    def __init__(self) -> None:
        self.replies: deque[Reply] = deque()
        self.requests: list[Received] = []
        self.parses_arguments = False
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def openai_base(self) -> str:
        return f"{self.url}/v1"

    @property
    def anthropic_base(self) -> str:
        return self.url

    def start(self) -> FakeProvider:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def answer(self, *replies: Reply) -> FakeProvider:
        with self.lock:
            self.replies.extend(replies)
        return self

    def next_reply(self, received: Received) -> Reply:
        with self.lock:
            self.requests.append(received)
            refused = _unparsed_arguments(received.body) if self.parses_arguments else None
            if refused:
                return refused
            if self.replies:
                return self.replies.popleft()
        return error(400, "fake provider: no scripted answer left for this request")

    @property
    def last(self) -> dict[str, Any]:
        """The body of the last request received."""
        return self.requests[-1].body


def _unparsed_arguments(body: dict[str, Any]) -> Reply | None:
    """llama.cpp's answer to a history whose tool-call arguments are not JSON."""
    for message in body.get("messages") or []:
        for tool_call in message.get("tool_calls") or []:
            arguments = (tool_call.get("function") or {}).get("arguments")
            try:
                json.loads(arguments) if isinstance(arguments, str) else None
            except json.JSONDecodeError as exc:
                body = {
                    "error": {
                        "code": 500,
                        "message": f"Failed to parse tool call arguments as JSON: {exc}",
                        "type": "server_error",
                    }
                }
                return Reply(body, status=500)
    return None


def _handler(provider: FakeProvider) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            return

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b"{}"
            body = json.loads(raw or b"{}")
            headers = {k.lower(): v for k, v in self.headers.items()}
            reply = provider.next_reply(Received(self.path, headers, body))
            if reply.delay:
                time.sleep(reply.delay)
            if body.get("stream") and reply.status == 200:
                usage = bool((body.get("stream_options") or {}).get("include_usage"))
                self._stream(reply, usage)
            else:
                self._send(reply.status, json.dumps(reply.body).encode(), reply.headers)

        def _send(self, status: int, data: bytes, headers: dict[str, str]) -> None:
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def _stream(self, reply: Reply, include_usage: bool) -> None:
            events = (
                anthropic_events(reply.body)
                if self.path.endswith("/messages")
                else openai_chunks(reply.body, include_usage)
            )
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("cache-control", "no-cache")
            self.send_header("connection", "close")
            self.end_headers()
            for number, event in enumerate(events):
                if number == 1 and reply.stall:
                    time.sleep(reply.stall)
                elif reply.chunk_delay:
                    time.sleep(reply.chunk_delay)
                try:
                    self.wfile.write(event.encode())
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    break  # the client gave up (its idle timeout)
            self.close_connection = True

        def do_GET(self) -> None:
            self._send(404, b'{"error": {"message": "not found"}}', {})

    return Handler


@pytest.fixture
def fake_provider() -> Iterator[FakeProvider]:
    provider = FakeProvider().start()
    try:
        yield provider
    finally:
        provider.stop()


# --- OpenAI-compatible answers ----------------------------------------------------------


def usage(prompt: int = 20, completion: int = 5) -> dict[str, int]:
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def openai_text(content: str | None, finish_reason: str = "stop", **extra: Any) -> Reply:
    """An answer without tool calls; ``content=None`` is what some servers send."""
    message: dict[str, Any] = {"role": "assistant", "content": content, **extra}
    return _openai(message, finish_reason)


def call(name: str, arguments: Any, id: Any = "") -> dict[str, Any]:
    """A tool call for ``openai_calls``: arguments as a dict or raw (even broken) text;
    ``id=None`` sends ``null``, ``id=MISSING`` leaves the key out, "" numbers it."""
    return {"name": name, "arguments": arguments, "id": id}


def openai_calls(
    *calls: dict[str, Any], content: str | None = None, finish_reason: str = "tool_calls"
) -> Reply:
    """One answer with these tool calls (several: parallel tool calls)."""
    wire = []
    for index, spec in enumerate(calls):
        arguments = spec["arguments"]
        entry: dict[str, Any] = {
            "type": "function",
            "function": {
                "name": spec["name"],
                "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments),
            },
        }
        if spec["id"] is not MISSING:
            entry["id"] = f"call_fake_{index}" if spec["id"] == "" else spec["id"]
        wire.append(entry)
    return _openai({"role": "assistant", "content": content, "tool_calls": wire}, finish_reason)


def _openai(message: dict[str, Any], finish_reason: str) -> Reply:
    return Reply(
        {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": "fake",
            "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
            "usage": usage(),
        }
    )


def error(
    status: int,
    message: str,
    type: str = "invalid_request_error",
    code: str | None = None,
    headers: dict[str, str] | None = None,
    param: str | None = None,
) -> Reply:
    body = {"error": {"message": message, "type": type, "code": code, "param": param}}
    return Reply(body, status=status, headers=headers or {})


def rate_limited(retry_after: float = 2) -> Reply:
    return error(
        429,
        "Rate limit reached for requests",
        "rate_limit_error",
        "rate_limit_exceeded",
        headers={"retry-after": f"{retry_after:g}"},
    )


def server_error(status: int = 500) -> Reply:
    return error(status, "The server had an error while processing your request", "server_error")


def context_length_error(limit: int = 4096, asked: int = 5000) -> Reply:
    """OpenAI's wording (llama.cpp and vLLM answer alike); litellm maps it to
    ``ContextWindowExceededError``."""
    return error(
        400,
        f"This model's maximum context length is {limit} tokens. However, your messages "
        f"resulted in {asked} tokens. Please reduce the length of the messages.",
        code="context_length_exceeded",
        param="messages",
    )


def schema_refused() -> Reply:
    """A server that will not constrain output with this JSON schema."""
    return error(
        400,
        "Invalid schema for response_format 'tool_call': 'anyOf' is not supported",
        param="response_format",
    )


# --- Anthropic answers ------------------------------------------------------------------


def anthropic_reply(*blocks: dict[str, Any], stop_reason: str = "end_turn") -> Reply:
    return Reply(
        {
            "id": "msg_fake",
            "type": "message",
            "role": "assistant",
            "model": "claude-fake",
            "content": list(blocks),
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": {"input_tokens": 20, "output_tokens": 5},
        }
    )


def text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def thinking_block(thinking: str, signature: str = "sig-fake") -> dict[str, Any]:
    return {"type": "thinking", "thinking": thinking, "signature": signature}


def tool_use_block(name: str, arguments: dict[str, Any], id: str = "toolu_fake") -> dict[str, Any]:
    return {"type": "tool_use", "id": id, "name": name, "input": arguments}


def anthropic_error(status: int, message: str, type: str = "invalid_request_error") -> Reply:
    return Reply({"type": "error", "error": {"type": type, "message": message}}, status=status)
