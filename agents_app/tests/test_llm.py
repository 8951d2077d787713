"""Model routing through litellm and the provider's failures (mock responses only)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import httpx
import pytest
from django.test import override_settings

from agents_app.runtime.llm import (
    ModelNotConfigured,
    ModelRouter,
    ProviderAuthError,
    ProviderUnavailable,
    complete,
    litellm_module,
    model_for,
)

litellm = litellm_module()
MESSAGES = [{"role": "user", "content": "hi"}]


@override_settings(
    SF_MODEL_FAST="openai/gpt-4o-mini", SF_MODEL_SMART="openai/gpt-4o", SF_MODEL_DEEP="openai/o1"
)
@pytest.mark.parametrize(
    ("mode", "model"),
    [("fast", "openai/gpt-4o-mini"), ("smart", "openai/gpt-4o"), ("deep", "openai/o1")],
)
def test_model_modes_map_to_the_configured_models(mode: str, model: str) -> None:
    assert model_for(mode) == model
    assert model_for(mode, "anthropic/claude-x") == "anthropic/claude-x"


@override_settings(SF_MODEL_SMART="")
def test_no_model_configured_is_a_clear_error() -> None:
    with pytest.raises(ModelNotConfigured) as caught:
        model_for("smart")
    message = str(caught.value)
    assert "set SF_MODEL_SMART to a litellm model name" in message
    assert message.count("SF_MODEL_SMART") == 1  # named once, not twice
    assert "SF_MODEL_FAST" not in message
    assert "SF_MODEL_DEEP" not in message
    assert "--replay TRACE" in message


class Script:
    """litellm completions answering, in order, with mock responses or raising errors."""

    def __init__(self, *answers: Any) -> None:
        self.answers = list(answers)
        self.models: list[str] = []

    def __call__(self, **kwargs: Any) -> Any:
        self.models.append(kwargs["model"])
        return complete(**kwargs, mock_response=self.answers.pop(0))


def rate_limited(retry_after: str | None) -> Exception:
    headers = {"retry-after": retry_after} if retry_after else {}
    response = httpx.Response(429, headers=headers, request=httpx.Request("POST", "https://x"))
    return litellm.RateLimitError(
        "slow down", llm_provider="openai", model="gpt-4o", response=response
    )


def server_error() -> Exception:
    return litellm.InternalServerError("boom", llm_provider="openai", model="gpt-4o")


def router(script: Script, **extra: Any) -> tuple[ModelRouter, list[float]]:
    slept: list[float] = []
    return ModelRouter(model="openai/gpt-4o", completion=script, sleep=slept.append, **extra), slept


def test_a_step_reports_tokens_and_cost_from_litellm() -> None:
    step, _ = router(Script("hello"))
    result = step.step(MESSAGES, [])
    assert result.content == "hello"
    assert result.tokens_in > 0
    assert result.tokens_out > 0
    assert result.cost > Decimal(0)  # litellm prices openai/gpt-4o


def test_rate_limits_wait_for_retry_after_then_succeed() -> None:
    script = Script(rate_limited("7"), rate_limited(None), "ok")
    model_router, slept = router(script)
    assert model_router.step(MESSAGES, []).content == "ok"
    assert slept == [7.0, 60.0]


def test_server_errors_back_off_then_switch_to_the_fallback() -> None:
    script = Script(server_error(), server_error(), server_error(), server_error(), "from fallback")
    model_router, slept = router(script, fallback="anthropic/claude-fallback")
    step = model_router.step(MESSAGES, [])
    assert step.content == "from fallback"
    assert step.model == "anthropic/claude-fallback"
    assert slept == [2.0, 4.0, 8.0]
    assert script.models == ["openai/gpt-4o"] * 4 + ["anthropic/claude-fallback"]
    assert "switching to anthropic/claude-fallback" in " ".join(model_router.notes)


def test_without_a_fallback_the_provider_is_unavailable() -> None:
    model_router, _ = router(Script(*[server_error()] * 4))
    with pytest.raises(ProviderUnavailable):
        model_router.step(MESSAGES, [])


@pytest.mark.parametrize(
    "error",
    [
        lambda: litellm.AuthenticationError("bad key", llm_provider="openai", model="gpt-4o"),
        lambda: litellm.PaymentRequiredError(
            "insufficient credit", llm_provider="openai", model="gpt-4o"
        ),
    ],
)
def test_auth_and_billing_errors_stop_with_the_reason(error: Any) -> None:
    model_router, slept = router(Script(error()))
    with pytest.raises(ProviderAuthError, match="openai/gpt-4o"):
        model_router.step(MESSAGES, [])
    assert slept == []


def test_other_provider_errors_end_the_step_cleanly() -> None:
    bad = litellm.BadRequestError("context window exceeded", llm_provider="openai", model="gpt-4o")
    model_router, _ = router(Script(bad))
    with pytest.raises(ProviderUnavailable, match="context window exceeded"):
        model_router.step(MESSAGES, [])
