"""Per-model sampling and answer budgets, asserted on the JSON the provider received."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.test import override_settings

from agents_app.gate.session import SessionGate
from agents_app.models import AgentSession
from agents_app.runtime.context import token_count
from agents_app.runtime.llm import ModelRouter, complete
from agents_app.runtime.loop import AgentLoop, Outcome
from agents_app.runtime.model_settings import ModelSettings, ToolCallStyle, model_settings_for
from agents_app.runtime.tool_specs import compact_spec
from agents_app.runtime.tools import COMPACT_TOOLS, TOOLS, ToolContext
from agents_app.runtime.trace import TraceRecorder
from agents_app.schemas import PromptProfile, policy_parse
from agents_app.tests.runtime_helpers import NullHooks
from agents_app.tests.test_loop import build_session  # noqa: F401 - fixture
from tests.fake_provider import (
    FakeProvider,
    call,
    error,
    fake_provider,  # noqa: F401 - fixture
    openai_calls,
)

QWEN = "openai/qwen2.5-coder-1.5b"
FINISH = call("finish", {"summary": "done"})
ENDPOINT = {"api_base": "", "api_key": "", "tool_calls": "text", "context_window": 8192}


def test_an_8k_model_reserves_a_quarter_of_its_window_for_the_answer_not_half() -> None:
    assert ModelSettings(QWEN, context_window=8192).answer_tokens(4096) == 2048
    assert ModelSettings(QWEN, context_window=4096).answer_tokens(4096) == 1024
    # A large window is capped by SF_MODEL_MAX_TOKENS; a configured max_tokens wins.
    assert ModelSettings(QWEN, context_window=200_000).answer_tokens(4096) == 4096
    assert ModelSettings(QWEN, context_window=8192, max_tokens=900).answer_tokens(4096) == 900


def test_sampling_defaults_to_temperature_0_and_sends_top_p_only_when_set() -> None:
    assert ModelSettings(QWEN).sampling() == {"temperature": 0.0}
    chosen = ModelSettings(QWEN, temperature=0.2, top_p=0.9)
    assert chosen.sampling() == {"temperature": 0.2, "top_p": 0.9}
    # litellm knows o3-mini takes no top_p: it is never sent there.
    assert ModelSettings("openai/o3-mini", top_p=0.9).sampling() == {"temperature": 0.0}


@override_settings(SF_MODEL_SMART=QWEN, SF_MODEL_ENDPOINTS={"smart": ENDPOINT})
def test_a_projects_policy_sets_sampling_budget_and_profile_per_model() -> None:
    policy = policy_parse(
        {
            "models": {
                "smart": {
                    "temperature": 0.3,
                    "top_p": 0.8,
                    "max_tokens": 700,
                    "prompt_profile": "full",
                }
            }
        }
    )
    chosen = model_settings_for("smart", None, policy.models)
    assert chosen.sampling() == {"temperature": 0.3, "top_p": 0.8}
    assert chosen.answer_tokens() == 700
    assert chosen.resolved_profile() == PromptProfile.FULL
    assert model_settings_for("smart").resolved_profile() == PromptProfile.COMPACT  # 8k: auto


def loop_for(session: AgentSession, worktree: Path, provider: FakeProvider) -> AgentLoop:
    chosen = ModelSettings(
        QWEN, api_base=provider.openai_base, tool_calls=ToolCallStyle.TEXT, context_window=8192
    )
    router = ModelRouter.from_settings(chosen, completion=complete, sleep=lambda s: None)
    return AgentLoop(
        router=router,
        tools=TOOLS,
        context=ToolContext(worktree=worktree),
        gate=SessionGate(session_id=session.pk, worktree=worktree),
        recorder=TraceRecorder(session=session),
        hooks=NullHooks(),
    )


@pytest.mark.django_db
def test_every_request_carries_the_sampling_and_fits_the_window_with_its_answer(
    build_session: AgentSession,  # noqa: F811
    git_repo: Path,
    fake_provider: FakeProvider,  # noqa: F811
) -> None:
    # A brief of ~5,500 tokens: beside it, the answer gets what the window has left.
    brief = "Change greet.py. " + "word " * 5500
    fake_provider.answer(openai_calls(FINISH))
    loop = loop_for(build_session, git_repo, fake_provider)
    result = loop.run(
        [{"role": "system", "content": "You are SF."}, {"role": "user", "content": brief}]
    )
    assert result.outcome == Outcome.FINISHED, result.detail
    sent = fake_provider.last
    assert sent["temperature"] == 0
    assert "top_p" not in sent
    prompt = token_count(QWEN, sent["messages"], sent["tools"])
    assert 1024 <= sent["max_tokens"] < 2048
    assert prompt + sent["max_tokens"] <= 8192


@pytest.mark.django_db
def test_a_server_that_refuses_the_sampling_is_asked_again_without_it(
    build_session: AgentSession,  # noqa: F811
    git_repo: Path,
    fake_provider: FakeProvider,  # noqa: F811
) -> None:
    refused = error(400, "Unsupported value: 'temperature' does not support 0 with this model.")
    fake_provider.answer(refused, openai_calls(FINISH))
    loop = loop_for(build_session, git_repo, fake_provider)
    result = loop.run([{"role": "user", "content": "do it"}])
    assert result.outcome == Outcome.FINISHED, result.detail
    first, second = (r.body for r in fake_provider.requests)
    assert first["temperature"] == 0
    assert "temperature" not in second


def test_the_compact_profile_offers_fewer_tools_in_less_than_half_the_schema_text() -> None:
    full = [tool.openai_spec() for tool in TOOLS.values()]
    compact = [compact_spec(tool.openai_spec()) for n, tool in TOOLS.items() if n in COMPACT_TOOLS]
    assert len(json.dumps(compact)) < len(json.dumps(full)) / 2
    read = next(spec for spec in compact if spec["function"]["name"] == "read_file")
    assert read["function"] == {
        "name": "read_file",
        "description": "Read a text file of the worktree, optionally a range of its lines",
        "parameters": {
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "offset": {"type": "integer"},
                "limit": {"type": "integer"},
            },
            "required": ["path"],
        },
    }


@pytest.mark.django_db
def test_a_compact_model_is_sent_the_compact_specs(
    build_session: AgentSession,  # noqa: F811
    git_repo: Path,
    fake_provider: FakeProvider,  # noqa: F811
) -> None:
    fake_provider.answer(openai_calls(FINISH))
    loop = loop_for(build_session, git_repo, fake_provider)
    assert loop.router.prompt_profile == PromptProfile.COMPACT  # auto, for an 8k window
    assert loop.run([{"role": "user", "content": "do it"}]).outcome == Outcome.FINISHED
    sent = {tool["function"]["name"]: tool["function"] for tool in fake_provider.last["tools"]}
    assert sent["read_file"]["parameters"]["properties"]["offset"] == {"type": "integer"}


def test_asking_litellm_about_an_unknown_model_prints_nothing(capfd) -> None:
    """litellm prints a red "Provider List" banner to stdout for a model name without a
    provider prefix; SF asks such questions at every step (the worker's log filled with
    them): the answer is a plain "unknown", and nothing reaches stdout."""
    from agents_app.runtime.model_settings import native_tool_calls_known, supported_params
    from agents_app.runtime.ratelimit import provider_key

    assert native_tool_calls_known("qwen2.5-coder-1.5b") is False
    assert supported_params("qwen2.5-coder-1.5b") is None
    assert provider_key("qwen2.5-coder-1.5b", {}) == "qwen2.5-coder-1.5b|"
    captured = capfd.readouterr()
    assert "Provider List" not in captured.out + captured.err
