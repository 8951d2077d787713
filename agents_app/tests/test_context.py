"""Fitting the conversation into the context window (``runtime/context.py``): pure
functions on message lists, counted here by characters; no database."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from django.test import override_settings

from agents_app.runtime.context import (
    DEFAULT_CONTEXT_WINDOW,
    KEEP_RECENT_STEPS,
    context_window,
    fit_messages,
    provider_asked,
    provider_limit,
    refused_window,
    token_count,
)
from agents_app.runtime.llm import ModelRouter
from agents_app.runtime.model_settings import model_settings_for
from agents_app.runtime.wire import well_formed_calls
from agents_app.schemas import policy_parse
from sf_core.errors import PolicyInvalid

SYSTEM = {"role": "system", "content": "You are SF. " + "Rules. " * 100}
BRIEF = {"role": "user", "content": "Task: make greet.py greet. " + "Criteria. " * 100}


def chars(messages: list[dict[str, Any]]) -> int:
    """A counter for the tests: a token per 4 characters of everything sent, 4 per message."""
    return sum(4 + len(json.dumps(m)) // 4 for m in messages)


def step(n: int, tool: str = "read_file", output_chars: int = 4000, **arguments: Any) -> list:
    """One step: an assistant turn with one call, and its tool result."""
    arguments = arguments or {"path": f"file{n}.py"}
    call = {
        "id": f"call_{n}",
        "type": "function",
        "function": {"name": tool, "arguments": json.dumps(arguments)},
    }
    return [
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": f"call_{n}", "content": f"{n}" * output_chars},
    ]


def conversation(steps: int = 6, **extra: Any) -> list[dict[str, Any]]:
    messages = [copy.deepcopy(SYSTEM), copy.deepcopy(BRIEF)]
    for n in range(1, steps + 1):
        messages += step(n, **extra)
    return messages


def fit(
    messages: list[dict[str, Any]], window: int, max_tokens: int = 500, margin: float = 0.0
) -> Any:
    """No margin by default: the windows below are what the counter says plus the answer."""
    return fit_messages(messages, count=chars, window=window, max_tokens=max_tokens, margin=margin)


def pairing(messages: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """(role, call id) in order: what providers check between calls and results."""
    shape = []
    for message in messages:
        for call in message.get("tool_calls") or []:
            shape.append(("call", call["id"]))
        if message["role"] == "tool":
            shape.append(("result", message["tool_call_id"]))
        if message["role"] != "tool" and not message.get("tool_calls"):
            shape.append((message["role"], ""))
    return shape


def test_a_conversation_that_fits_is_left_as_it_is() -> None:
    messages = conversation(2)
    result = fit(messages, window=100_000)
    assert result.fits
    assert result.messages is messages
    assert result.cuts == []
    assert result.tokens == chars(messages)


def test_old_tool_outputs_are_cut_oldest_first_to_a_stub_keeping_the_pairing() -> None:
    messages = conversation(6)
    before = copy.deepcopy(messages)
    need = chars(messages)
    result = fit(messages, window=need - 1500 + 500, max_tokens=500)  # 1.5 outputs too many
    assert result.fits
    assert messages == before  # the caller's list is not changed
    assert pairing(result.messages) == pairing(before)
    outputs = [m["content"] for m in result.messages if m["role"] == "tool"]
    assert outputs[0] == (
        "[SF] output of read_file file1.py, 4,000 chars, cut to save context; "
        "call the tool again to see it"
    )
    assert outputs[1].startswith("[SF] output of read_file file2.py, 4,000 chars")
    assert outputs[2:] == [m["content"] for m in before if m["role"] == "tool"][2:]
    assert result.cuts == [
        "output of read_file file1.py, 4,000 chars",
        "output of read_file file2.py, 4,000 chars",
    ]
    assert result.cut_chars == 8000
    assert result.tokens == chars(result.messages) <= result.limit
    assert "cut 2 old part(s) (8,000 chars)" in result.note()


def test_the_system_prompt_the_brief_and_the_last_steps_are_never_cut() -> None:
    messages = conversation(6)
    protected = chars(messages[:2] + messages[-2 * KEEP_RECENT_STEPS :])
    result = fit(messages, window=protected + 2 * 4 + 500 + 600, max_tokens=500)
    assert result.fits
    assert result.messages[:2] == messages[:2]
    assert result.messages[-2 * KEEP_RECENT_STEPS :] == messages[-2 * KEEP_RECENT_STEPS :]
    cut = [m for m in result.messages[2:-6] if m["role"] == "tool"]
    assert all(m["content"].startswith("[SF] output of read_file") for m in cut)


def test_when_the_last_steps_do_not_fit_only_the_latest_is_kept() -> None:
    messages = conversation(4)
    latest = chars(messages[:2] + messages[-2:])
    result = fit(messages, window=latest + 3 * 50 + 500 + 800, max_tokens=500)
    assert result.fits
    outputs = [m["content"] for m in result.messages if m["role"] == "tool"]
    assert [o.startswith("[SF] output of") for o in outputs] == [True, True, True, False]


def test_long_arguments_of_old_calls_are_cut_and_stay_valid_json() -> None:
    messages = [copy.deepcopy(SYSTEM), copy.deepcopy(BRIEF)]
    messages += step(1, "write_file", 20, path="big.py", content="x = 1\n" * 2000)
    messages += step(2, "edit_file", 20, path="big.py", search="{not json", replace="y")
    bad = step(3, "write_file", 20)
    bad[0]["tool_calls"][0]["function"]["arguments"] = '{"path": "a", "content": "' + "z" * 900
    messages += bad + step(4) + step(5) + step(6)
    result = fit(messages, window=chars(messages) - 4100 + 500, max_tokens=500)
    assert result.fits
    first = json.loads(result.messages[2]["tool_calls"][0]["function"]["arguments"])
    assert first == {"path": "big.py", "content": "[SF] 12,000 chars cut to save context"}
    second = result.messages[4]["tool_calls"][0]["function"]["arguments"]
    assert json.loads(second) == {"path": "big.py", "search": "{not json", "replace": "y"}
    assert result.messages[6]["tool_calls"][0]["function"]["arguments"] == "{}"
    assert "content of write_file, 12,000 chars" in result.cuts
    assert pairing(result.messages) == pairing(messages)


def test_old_answer_text_goes_last() -> None:
    messages = conversation(5, output_chars=10)
    messages[2]["content"] = "Let me think about this at length. " * 40
    result = fit(messages, window=chars(messages) - 100 + 500 + 50, max_tokens=500)
    assert result.fits
    assert result.messages[2]["content"] == (
        "[SF] an earlier answer's text, 1,400 chars, cut to save context"
    )
    assert result.messages[3]["content"] == "1" * 10  # too short to be worth a stub


def test_what_cannot_fit_is_said_with_the_numbers() -> None:
    messages = conversation(3, output_chars=20_000)
    result = fit(messages, window=5000, max_tokens=1000)
    assert not result.fits
    assert "needs" in result.problem
    assert "5,000-token context window leaves 4,000" in result.problem
    assert "max_tokens 1,000" in result.problem
    too_big_answer = fit(conversation(1), window=4096, max_tokens=4096)
    assert "SF_MODEL_MAX_TOKENS" in too_big_answer.problem
    assert "SF_MODEL_<MODE>_CONTEXT_WINDOW" in too_big_answer.problem


def test_a_stub_is_not_cut_again_and_cutting_twice_changes_nothing() -> None:
    messages = conversation(6)
    window = chars(messages) - 2000 + 500 + 500
    once = fit(messages, window=window)
    again = fit(once.messages, window=window)
    assert again.messages is once.messages
    assert again.cuts == []


def test_a_wider_margin_cuts_more() -> None:
    messages = conversation(8)
    window = chars(messages) + 500 + 500
    assert fit(messages, window=window, margin=0.0).cuts == []
    assert len(fit(messages, window=window, margin=0.3).cuts) >= 2


# --- the window, the count, the provider's limit -----------------------------------


def test_the_window_is_configured_else_litellms_else_the_default() -> None:
    assert context_window("openai/gpt-4o", 32_000) == 32_000
    assert context_window("openai/gpt-4o") == 128_000
    assert context_window("anthropic/claude-sonnet-4-5") == 200_000
    assert context_window("openai/qwen2.5-coder-1.5b") == DEFAULT_CONTEXT_WINDOW == 8192
    assert context_window("ollama/qwen2.5") == DEFAULT_CONTEXT_WINDOW


def test_litellms_count_includes_the_tool_specs() -> None:
    tools = [
        {
            "type": "function",
            "function": {
                "name": "read_file",
                "description": "Read a file of the worktree, with line numbers.",
                "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
            },
        }
    ]
    messages = [{"role": "user", "content": "hello there"}]
    bare = token_count("openai/qwen2.5-coder-1.5b", messages, [])
    assert 0 < bare < token_count("openai/qwen2.5-coder-1.5b", messages, tools)
    longer = [{"role": "user", "content": "hello there " * 200}]
    assert token_count("openai/qwen2.5-coder-1.5b", longer, []) > bare + 150


@pytest.mark.parametrize(
    ("text", "limit"),
    [
        (
            "litellm.ContextWindowExceededError: OpenAIException - This model's maximum context "
            "length is 8192 tokens. However, your messages resulted in 9000 tokens.",
            8192,
        ),
        ('{"error": {"n_prompt_tokens": 5000, "n_ctx": 4096, "type": "exceed_ctx"}}', 4096),
        ("prompt is too long for the context window of 200,000 tokens", 200_000),
        ("the request exceeds the available context size, try increasing it", 0),
    ],
)
def test_the_limit_a_provider_names_is_read(text: str, limit: int) -> None:
    assert provider_limit(text) == limit


def test_after_a_refusal_the_window_is_the_providers_scaled_to_its_count() -> None:
    openai = "This model's maximum context length is 8192 tokens. However, your messages "
    assert refused_window(128_000, openai + "resulted in 9000 tokens.", 6000) == 8192 * 6000 // 9000
    assert refused_window(128_000, openai + "resulted in 5000 tokens.", 6000) == 8192
    anthropic = "prompt is too long: 210,000 tokens > 200,000 maximum"
    assert provider_asked(anthropic) == 210_000
    assert refused_window(1_000_000, anthropic, 150_000) == 200_000 * 150_000 // 210_000
    llama = '{"n_prompt_tokens": 5000, "n_ctx": 4096}'
    assert refused_window(8192, llama, 4000) == 4096 * 4000 // 5000
    assert refused_window(8192, "too long", 4000) == 8192


# --- where the window is configured ---------------------------------------------------

ENDPOINTS = {
    "smart": {"api_base": "", "api_key": "", "tool_calls": "auto", "context_window": 16_384},
    "fallback": {"api_base": "", "api_key": "", "tool_calls": "auto", "context_window": 0},
}


@override_settings(SF_MODEL_SMART="openai/qwen", SF_MODEL_ENDPOINTS=ENDPOINTS)
def test_the_window_comes_from_the_mode_and_a_project_overrides_it() -> None:
    assert model_settings_for("smart").context_window == 16_384
    assert ModelRouter.from_settings(model_settings_for("smart")).context_window == 16_384
    models = policy_parse({"models": {"smart": {"context_window": 32_768}}}).models
    assert model_settings_for("smart", None, models).context_window == 32_768
    with pytest.raises(PolicyInvalid, match=r"models\.smart\.context_window"):
        policy_parse({"models": {"smart": {"context_window": 10}}})


def test_malformed_arguments_are_kept_as_an_empty_object() -> None:
    message: dict[str, Any] = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "x", "arguments": "{not"}},
            {"id": "b", "type": "function", "function": {"name": "y", "arguments": '{"k": 1}'}},
            {"id": "c", "type": "function", "function": {"name": "z", "arguments": "[1]"}},
        ],
    }
    fixed = well_formed_calls(message)
    assert [c["function"]["arguments"] for c in fixed["tool_calls"]] == ["{}", '{"k": 1}', "{}"]
    assert message["tool_calls"][0]["function"]["arguments"] == "{not"  # not changed in place
    fine = {"role": "assistant", "content": "hi"}
    assert well_formed_calls(fine) is fine
