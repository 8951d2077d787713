"""Server-sent events for the fake provider: a scripted answer cut into stream chunks.

OpenAI: ``chat.completion.chunk`` lines — the role first, the content in pieces, each
tool call opened with its id and name and its arguments in several deltas (as real
servers stream them), then ``finish_reason``, then — only when the request asked with
``stream_options.include_usage``, as OpenAI and llama.cpp's server do — a chunk with no
choices and the usage, then ``[DONE]``. Anthropic:
``message_start``, per block ``content_block_start`` / ``…_delta`` / ``…_stop``,
``message_delta`` with the stop reason, ``message_stop``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

PIECE = 8  # characters per streamed delta


def pieces(text: str, size: int = PIECE) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def _sse(data: Any, event: str | None = None) -> str:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {data if isinstance(data, str) else json.dumps(data)}\n\n"


def openai_chunks(body: dict[str, Any], include_usage: bool = False) -> Iterator[str]:
    choice = body["choices"][0]
    message = choice["message"]

    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> str:
        return _sse(
            {
                "id": body.get("id", "chatcmpl-fake"),
                "object": "chat.completion.chunk",
                "created": body.get("created", 0),
                "model": body.get("model", "fake"),
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
                **extra,
            }
        )

    yield chunk({"role": "assistant", "content": ""})
    if message.get("content"):
        for piece in pieces(message["content"]):
            yield chunk({"content": piece})
    for index, tool_call in enumerate(message.get("tool_calls") or []):
        opening = {
            "index": index,
            "type": "function",
            "function": {"name": tool_call["function"]["name"], "arguments": ""},
        }
        if "id" in tool_call:
            opening["id"] = tool_call["id"]
        yield chunk({"tool_calls": [opening]})
        for piece in pieces(tool_call["function"]["arguments"]):
            yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    yield chunk({}, choice.get("finish_reason") or "stop")
    if include_usage:
        yield _sse(
            {
                "id": body.get("id", "chatcmpl-fake"),
                "object": "chat.completion.chunk",
                "created": body.get("created", 0),
                "model": body.get("model", "fake"),
                "choices": [],
                "usage": body.get("usage"),
            }
        )
    yield _sse("[DONE]")


def anthropic_events(body: dict[str, Any]) -> Iterator[str]:
    start = {**body, "content": [], "stop_reason": None}
    yield _sse({"type": "message_start", "message": start}, "message_start")
    for index, block in enumerate(body["content"]):
        yield from _anthropic_block(index, block)
    yield _sse(
        {
            "type": "message_delta",
            "delta": {"stop_reason": body.get("stop_reason"), "stop_sequence": None},
            "usage": {"output_tokens": body.get("usage", {}).get("output_tokens", 0)},
        },
        "message_delta",
    )
    yield _sse({"type": "message_stop"}, "message_stop")


def _anthropic_block(index: int, block: dict[str, Any]) -> Iterator[str]:
    kind = block["type"]
    if kind == "text":
        opening, deltas = (
            {"type": "text", "text": ""},
            [{"type": "text_delta", "text": p} for p in pieces(block["text"])],
        )
    elif kind == "thinking":
        opening = {"type": "thinking", "thinking": "", "signature": ""}
        deltas = [{"type": "thinking_delta", "thinking": p} for p in pieces(block["thinking"])]
        deltas.append({"type": "signature_delta", "signature": block.get("signature", "")})
    else:  # tool_use
        opening = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
        deltas = [
            {"type": "input_json_delta", "partial_json": p}
            for p in pieces(json.dumps(block["input"]))
        ]
    yield _sse(
        {"type": "content_block_start", "index": index, "content_block": opening},
        "content_block_start",
    )
    for delta in deltas:
        yield _sse(
            {"type": "content_block_delta", "index": index, "delta": delta}, "content_block_delta"
        )
    yield _sse({"type": "content_block_stop", "index": index}, "content_block_stop")
