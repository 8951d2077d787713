"""Streamed answers through litellm to the fake provider over HTTP (real SSE chunks)."""

from __future__ import annotations

import dataclasses
import itertools
import json
import time
from typing import Any

import pytest

from agents_app.runtime.llm import litellm_module
from agents_app.runtime.streaming import streamed_completion
from tests.fake_provider import (
    FakeProvider,
    anthropic_reply,
    call,
    fake_provider,  # noqa: F401 - fixture
    openai_calls,
    openai_text,
    text_block,
    usage,
)

MODEL = "openai/qwen2.5-coder-1.5b"
ASK = [{"role": "user", "content": "write it"}]


def ask(provider: FakeProvider, idle: float, shown: list[str] | None = None) -> Any:
    return streamed_completion(
        idle_timeout=idle,
        on_text=None if shown is None else shown.append,
        every=0.0,
        model=MODEL,
        messages=ASK,
        api_base=provider.openai_base,
        api_key="x",
    )


def test_text_and_tool_calls_come_back_whole_and_the_text_is_shown_as_it_comes(
    fake_provider: FakeProvider,  # noqa: F811
) -> None:
    arguments = {"path": "hello.py", "content": "print('hello')\n" * 3}
    reply = openai_calls(call("write_file", arguments, id="call_1"), content="Writing hello.py.")
    fake_provider.answer(reply)
    shown: list[str] = []
    response = ask(fake_provider, idle=5, shown=shown)
    assert fake_provider.last["stream"] is True
    message = response.choices[0].message
    assert message.content == "Writing hello.py."
    [tool_call] = message.tool_calls
    assert (tool_call.id, tool_call.function.name) == ("call_1", "write_file")
    assert json.loads(tool_call.function.arguments) == arguments
    assert shown[-1] == ""  # complete: the page shows the step itself now
    growing = shown[:-1]
    assert growing[0] == "Writing "
    assert growing[-1] == "Writing hello.py."
    assert all(later.startswith(earlier) for earlier, later in itertools.pairwise(growing))


def test_the_idle_timeout_is_silence_not_the_answers_whole_time(
    fake_provider: FakeProvider,  # noqa: F811
) -> None:
    slow = dataclasses.replace(openai_text("a long answer, written slowly " * 3), chunk_delay=0.15)
    fake_provider.answer(slow)
    started = time.monotonic()
    response = ask(fake_provider, idle=1.0)
    assert time.monotonic() - started > 1.5  # longer than the idle timeout, never cut off
    assert response.choices[0].message.content == "a long answer, written slowly " * 3


def test_a_server_gone_silent_mid_answer_is_abandoned_after_the_idle_timeout(
    fake_provider: FakeProvider,  # noqa: F811
) -> None:
    fake_provider.answer(dataclasses.replace(openai_text("never finished"), stall=6))
    litellm = litellm_module()
    started = time.monotonic()
    # litellm raises it mid-stream as a ServiceUnavailableError (MidStreamFallbackError):
    # one of the router's server errors, retried, then the fallback or an outage.
    with pytest.raises((litellm.Timeout, litellm.ServiceUnavailableError)):
        ask(fake_provider, idle=1.0)
    assert time.monotonic() - started < 5


def test_an_answer_still_being_written_at_the_deadline_is_cut_off_there(
    fake_provider: FakeProvider,  # noqa: F811
) -> None:
    # Written at ~10 words a second, this answer would take about 6 s: a unit's hard
    # timeout falls in the middle of it.
    words = " ".join(f"w{number}" for number in range(60))
    fake_provider.answer(dataclasses.replace(openai_text(words), chunk_delay=0.1))
    started = time.monotonic()
    response = streamed_completion(
        idle_timeout=5,
        deadline=started + 1.0,
        model=MODEL,
        messages=ASK,
        api_base=fake_provider.openai_base,
        api_key="x",
    )
    assert time.monotonic() - started < 3
    content = response.choices[0].message.content
    assert content
    assert words.startswith(content)
    assert len(content) < len(words)
    assert response.choices[0].finish_reason == "length"  # the loop reads it as cut off


def test_a_streamed_answer_reports_its_tokens(fake_provider: FakeProvider) -> None:  # noqa: F811
    """OpenAI-compatible servers send the usage of a streamed answer only when asked
    (stream_options.include_usage; the fake, like llama.cpp's server, sends none else):
    unasked, every streamed step was recorded as 0 tokens and cost nothing."""
    fake_provider.answer(
        dataclasses.replace(
            openai_text("hi"),
            body={**openai_text("hi").body, "usage": usage(prompt=31, completion=8)},
        )
    )
    response = ask(fake_provider, idle=5)
    assert fake_provider.last["stream_options"] == {"include_usage": True}
    assert (response.usage.prompt_tokens, response.usage.completion_tokens) == (31, 8)


def test_anthropic_streams_its_usage_without_being_asked(
    fake_provider: FakeProvider,  # noqa: F811
) -> None:
    fake_provider.answer(anthropic_reply(text_block("hi")))
    response = streamed_completion(
        idle_timeout=5,
        model="anthropic/claude-3-5-sonnet-20241022",
        messages=ASK,
        api_base=fake_provider.anthropic_base,
        api_key="x",
    )
    assert "stream_options" not in fake_provider.last
    assert (response.usage.prompt_tokens, response.usage.completion_tokens) == (20, 5)
