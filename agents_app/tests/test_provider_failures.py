"""The provider's failures against real wire formats: litellm → the fake provider over HTTP.

Rate limits with ``retry-after``, 5xx, a context window too small (cut before the step,
and OpenAI's context-length error: cut harder and ask once more), malformed tool-call
JSON answered and kept out of the history, and streamed tool-call deltas.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agents_app.models import AgentSession, TraceEvent
from agents_app.runtime.context import token_count
from agents_app.runtime.llm import complete, litellm_module
from agents_app.runtime.loop import AgentLoop, Outcome
from agents_app.runtime.ratelimit import LocalLimits
from agents_app.tests.test_loop import build_session  # noqa: F401 - fixture
from agents_app.tests.test_provider_conformance import FINISH, go, loop_for
from tests.fake_provider import (
    FakeProvider,
    anthropic_reply,
    call,
    context_length_error,
    fake_provider,  # noqa: F401 - fixture
    openai_calls,
    rate_limited,
    server_error,
    tool_use_block,
)

pytestmark = pytest.mark.django_db
QWEN = "openai/qwen2.5-coder-1.5b"  # litellm does not know it: the default 8192 window
BIG = 12_345


def recorded(loop: AgentLoop) -> list[float]:
    """The router's waits, recorded instead of slept; its own rate limiter."""
    slept: list[float] = []
    loop.router.sleep = slept.append
    loop.router.limits = LocalLimits()
    return slept


def notes() -> str:
    steps = TraceEvent.objects.filter(kind="model_step").order_by("seq")
    return " | ".join(n for e in steps for n in e.payload.get("notes", []))


def big_file(worktree: Path, name: str, size: int = BIG) -> None:
    """A source file of ``size`` characters (varied: it costs real tokens)."""
    lines = [
        f"def handler_{i}(request): return respond(request, code={i * 7919 % 1000})\n"
        for i in range(size // 40)
    ]
    (worktree / name).write_text("".join(lines)[:size])


def pairs(body: dict[str, Any]) -> tuple[list[str], list[str]]:
    """The tool-call ids of the assistant turns and of the results, in order (OpenAI)."""
    calls = [c["id"] for m in body["messages"] for c in m.get("tool_calls") or []]
    results = [m["tool_call_id"] for m in body["messages"] if m["role"] == "tool"]
    return calls, results


# --- rate limits and server errors -----------------------------------------------------


def test_a_429_waits_what_retry_after_says_then_succeeds(
    build_session: AgentSession,  # noqa: F811
    git_repo: Path,
    fake_provider: FakeProvider,  # noqa: F811
) -> None:
    fake_provider.answer(rate_limited(retry_after=3), openai_calls(FINISH))
    loop = loop_for(build_session, git_repo, fake_provider)
    slept = recorded(loop)
    assert go(loop).outcome == Outcome.FINISHED
    assert slept == [3.0]
    assert len(fake_provider.requests) == 2
    assert "rate limited; waiting 3 s" in notes()


def test_5xx_backs_off_then_succeeds(
    build_session: AgentSession,  # noqa: F811
    git_repo: Path,
    fake_provider: FakeProvider,  # noqa: F811
) -> None:
    fake_provider.answer(server_error(503), server_error(500), openai_calls(FINISH))
    loop = loop_for(build_session, git_repo, fake_provider)
    slept = recorded(loop)
    assert go(loop).outcome == Outcome.FINISHED
    assert slept == [2.0, 4.0]
    assert len(fake_provider.requests) == 3
    assert "retrying in 2 s" in notes()


# --- the context window -----------------------------------------------------------------


def reads(*names: str) -> list[Any]:
    return [openai_calls(call("read_file", {"path": name}, id=f"call_{name}")) for name in names]


def lists(count: int) -> list[Any]:
    return [openai_calls(call("list_dir", {"path": "."}, id=f"call_ls{i}")) for i in range(count)]


def test_old_tool_outputs_are_cut_before_the_step_that_would_not_fit(
    build_session: AgentSession,  # noqa: F811
    git_repo: Path,
    fake_provider: FakeProvider,  # noqa: F811
) -> None:
    for name in ("greet.py", "util.py"):
        big_file(git_repo, name)
    fake_provider.answer(*reads("greet.py", "util.py"), *lists(3), openai_calls(FINISH))
    loop = loop_for(build_session, git_repo, fake_provider, model=QWEN)
    assert go(loop).outcome == Outcome.FINISHED
    last = fake_provider.last
    outputs = [m["content"] for m in last["messages"] if m["role"] == "tool"]
    assert outputs[0].startswith("[SF] output of read_file greet.py, ")
    assert outputs[0].endswith(" chars, cut to save context; call the tool again to see it")
    assert not any(o.startswith("[SF]") for o in outputs[2:])  # the last three steps
    calls, results = pairs(last)
    assert calls == results == ["call_greet.py", "call_util.py", "call_ls0", "call_ls1", "call_ls2"]
    assert last["messages"][1]["content"] == "do it"  # the brief
    sent = token_count(QWEN, last["messages"], last["tools"])
    assert sent + last["max_tokens"] <= 8192
    assert "context: cut " in notes()


def test_anthropic_keeps_tool_use_and_tool_result_paired_when_cut(
    build_session: AgentSession,  # noqa: F811
    git_repo: Path,
    fake_provider: FakeProvider,  # noqa: F811
) -> None:
    big_file(git_repo, "greet.py", 6000)
    big_file(git_repo, "small.py", 1500)
    answers = [
        anthropic_reply(tool_use_block(tool, args, f"toolu_{i}"), stop_reason="tool_use")
        for i, (tool, args) in enumerate(
            [("read_file", {"path": "greet.py"})]
            + [("read_file", {"path": "small.py"})] * 3
            + [("finish", {"summary": "ok"})]
        )
    ]
    fake_provider.answer(*answers)
    loop = loop_for(build_session, git_repo, fake_provider, model="anthropic/claude-sonnet-4-5")
    loop.router.context_window = 3800  # configured: wins over litellm's 200,000
    result = go(loop)
    assert result.outcome == Outcome.FINISHED, result.detail
    sent = fake_provider.last["messages"]
    uses = [b["id"] for m in sent for b in m["content"] if b.get("type") == "tool_use"]
    results = [b for m in sent for b in m["content"] if b.get("type") == "tool_result"]
    assert uses == [b["tool_use_id"] for b in results]
    first = json.dumps(results[0]["content"])
    assert "[SF] output of read_file greet.py" in first


def test_a_context_length_error_cuts_harder_and_asks_once_more(
    build_session: AgentSession,  # noqa: F811
    git_repo: Path,
    fake_provider: FakeProvider,  # noqa: F811
) -> None:
    for name in ("greet.py", "util.py"):
        big_file(git_repo, name)
    fake_provider.answer(
        *reads("greet.py", "util.py"),
        *lists(3),
        context_length_error(limit=8192, asked=16_000),  # OpenAI's body, HTTP 400
        openai_calls(FINISH),
    )
    loop = loop_for(build_session, git_repo, fake_provider, model="openai/gpt-4o")  # 128k
    assert go(loop).outcome == Outcome.FINISHED
    refused, retried = (r.body for r in fake_provider.requests[-2:])
    assert not any(str(m.get("content")).startswith("[SF]") for m in refused["messages"])
    outputs = [m["content"] for m in retried["messages"] if m["role"] == "tool"]
    assert outputs[0].startswith("[SF] output of read_file greet.py")
    assert outputs[1].startswith("[SF] output of read_file util.py")
    assert pairs(retried)[0] == pairs(retried)[1]
    assert "maximum context length is 8192 tokens" in notes()
    assert token_count("openai/gpt-4o", retried["messages"], retried["tools"]) < 8192 - 256


def test_a_conversation_that_cannot_fit_ends_the_unit_with_the_reason(
    build_session: AgentSession,  # noqa: F811
    git_repo: Path,
    fake_provider: FakeProvider,  # noqa: F811
) -> None:
    refused = context_length_error(limit=8192, asked=480)
    fake_provider.answer(refused, refused, openai_calls(FINISH))
    result = go(loop_for(build_session, git_repo, fake_provider))
    assert result.outcome == Outcome.CONTEXT_FULL
    assert "does not fit the model's context window" in result.detail
    assert "maximum context length is 8192" in result.detail
    assert len(fake_provider.requests) == 2  # asked once more, not again and again

    loop = loop_for(build_session, git_repo, fake_provider, model=QWEN)
    loop.router.context_window = 600  # the tools' specs alone are more
    result = go(loop)
    assert result.outcome == Outcome.CONTEXT_FULL
    assert "600-token context window leaves 314 for it" in result.detail
    assert len(fake_provider.requests) == 2  # never sent


# --- malformed tool-call JSON -----------------------------------------------------------


def test_malformed_arguments_are_answered_and_kept_out_of_the_history(
    build_session: AgentSession,  # noqa: F811
    git_repo: Path,
    fake_provider: FakeProvider,  # noqa: F811
) -> None:
    fake_provider.parses_arguments = True  # as some servers do (SGLang's router)
    broken = '{"path": "hi.py", "content": "print("hi")\\n"}'
    fake_provider.answer(
        openai_calls(call("write_file", broken, id="call_bad")),
        openai_calls(call("write_file", {"path": "hi.py", "content": 'print("hi")\n'})),
        openai_calls(FINISH),
    )
    loop = loop_for(build_session, git_repo, fake_provider, model=QWEN)
    assert go(loop).outcome == Outcome.FINISHED
    assert (git_repo / "hi.py").read_text() == 'print("hi")\n'
    answered = fake_provider.requests[1].body["messages"]
    kept = next(m for m in answered if m.get("tool_calls"))["tool_calls"][0]
    assert kept["id"] == "call_bad"
    assert kept["function"]["arguments"] == "{}"
    error = answered[-1]["content"]
    assert error.startswith("invalid arguments for write_file: Expecting ',' delimiter")
    assert """"content": "print("hi")\\\\n"}'; nothing was run""" in error
    assert len(fake_provider.requests) == 3  # no 500s, no retries
    first = TraceEvent.objects.filter(kind="model_step").order_by("seq").first()
    assert first is not None
    stored = first.payload["tool_calls"][0]
    assert stored["arguments"] == broken  # the trace keeps what the model wrote


# --- streamed tool-call deltas ------------------------------------------------------------


def streamed(**kwargs: Any) -> Any:
    """A completion that streams and reassembles the chunks, as a streaming router would."""
    chunks = list(complete(max_retries=0, stream=True, **kwargs))
    return litellm_module().stream_chunk_builder(chunks, messages=kwargs["messages"])


@pytest.mark.parametrize("model", [QWEN, "anthropic/claude-sonnet-4-5"])
def test_streamed_parallel_tool_calls_are_reassembled(
    build_session: AgentSession,  # noqa: F811
    git_repo: Path,
    fake_provider: FakeProvider,  # noqa: F811
    model: str,
) -> None:
    files = {"a.py": "print('a')\n" * 5, "b.py": "print('b')\n" * 5}
    if model.startswith("anthropic/"):
        writes = [
            tool_use_block("write_file", {"path": p, "content": c}, f"toolu_{p}")
            for p, c in files.items()
        ]
        first = anthropic_reply(*writes, stop_reason="tool_use")
        done = anthropic_reply(tool_use_block("finish", {"summary": "ok"}, "toolu_f"))
    else:
        writes = [
            call("write_file", {"path": p, "content": c}, id=f"call_{p}") for p, c in files.items()
        ]
        first, done = openai_calls(*writes), openai_calls(FINISH)
    fake_provider.answer(first, done)
    loop = loop_for(build_session, git_repo, fake_provider, model=model)
    loop.router.completion = streamed
    assert go(loop).outcome == Outcome.FINISHED
    assert all(r.body["stream"] is True for r in fake_provider.requests)
    assert {p: (git_repo / p).read_text() for p in files} == files
    if not model.startswith("anthropic/"):
        calls, results = pairs(fake_provider.last)
        assert calls == results == ["call_a.py", "call_b.py"]
