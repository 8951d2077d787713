"""The fake provider answers litellm as the real wire formats do (its own checks)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agents_app.runtime.llm import litellm_module
from tests.fake_provider import (
    MISSING,
    FakeProvider,
    anthropic_reply,
    call,
    context_length_error,
    fake_provider,  # noqa: F401 - fixture
    openai_calls,
    rate_limited,
    text_block,
    thinking_block,
    tool_use_block,
)

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "read",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
        },
    }
]
HI = [{"role": "user", "content": "hi"}]


def ask(provider: FakeProvider, model: str = "openai/qwen", **options: Any) -> Any:
    base = provider.anthropic_base if model.startswith("anthropic/") else provider.openai_base
    return litellm_module().completion(
        model=model, api_base=base, api_key="k", messages=HI, max_retries=0, **options
    )


def test_parallel_calls_with_null_and_missing_ids(fake_provider: FakeProvider) -> None:  # noqa: F811
    fake_provider.answer(
        openai_calls(call("read_file", {"path": "a"}, id=None), call("read_file", "{", MISSING))
    )
    message = ask(fake_provider, tools=TOOLS).choices[0].message
    assert [c.function.arguments for c in message.tool_calls] == ['{"path": "a"}', "{"]
    assert fake_provider.requests[0].path == "/v1/chat/completions"
    assert fake_provider.last["tools"][0]["function"]["name"] == "read_file"


def test_streamed_tool_call_deltas_are_reassembled(fake_provider: FakeProvider) -> None:  # noqa: F811
    fake_provider.answer(openai_calls(call("read_file", {"path": "a/long/path.txt"}), content="ok"))
    chunks = list(ask(fake_provider, tools=TOOLS, stream=True))
    assert len(chunks) > 4  # really streamed in pieces
    whole = litellm_module().stream_chunk_builder(chunks).choices[0]
    assert whole.message.content == "ok"
    assert json.loads(whole.message.tool_calls[0].function.arguments) == {"path": "a/long/path.txt"}
    assert whole.finish_reason == "tool_calls"


def test_errors_map_to_litellm_exceptions_with_their_headers(fake_provider: FakeProvider) -> None:  # noqa: F811
    litellm = litellm_module()
    fake_provider.answer(rate_limited(7), context_length_error())
    with pytest.raises(litellm.RateLimitError) as limited:
        ask(fake_provider)
    assert limited.value.litellm_response_headers["retry-after"] == "7"
    with pytest.raises(litellm.ContextWindowExceededError):
        ask(fake_provider)


def test_an_unscripted_request_fails_loudly(fake_provider: FakeProvider) -> None:  # noqa: F811
    with pytest.raises(Exception, match="no scripted answer left"):
        ask(fake_provider)


@pytest.mark.parametrize("stream", [False, True])
def test_anthropic_messages_with_thinking_and_tool_use(
    fake_provider: FakeProvider,  # noqa: F811
    stream: bool,
) -> None:
    fake_provider.answer(
        anthropic_reply(
            thinking_block("let me think"),
            text_block("reading"),
            tool_use_block("read_file", {"path": "a"}),
            stop_reason="tool_use",
        )
    )
    response = ask(fake_provider, "anthropic/claude-sonnet-4-5", tools=TOOLS, stream=stream)
    if stream:
        response = litellm_module().stream_chunk_builder(list(response))
    message = response.choices[0].message
    assert fake_provider.requests[0].path == "/v1/messages"
    assert fake_provider.last["tools"][0]["input_schema"]["properties"] == {
        "path": {"type": "string"}
    }
    assert message.content == "reading"
    assert message.tool_calls[0].id == "toolu_fake"
    assert response.choices[0].finish_reason == "tool_calls"
    if not stream:
        assert message.thinking_blocks[0]["thinking"] == "let me think"
