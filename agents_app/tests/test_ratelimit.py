"""One rate limiter per provider: a 429's retry-after, seen by one router, makes every
router of the same provider wait (Redis across processes; a dict when embedded)."""

from __future__ import annotations

import time
from typing import Any

import pytest
from django.conf import settings

from agents_app.runtime.llm import ModelRouter, complete
from agents_app.runtime.model_settings import ModelSettings
from agents_app.runtime.ratelimit import (
    LocalLimits,
    ProviderLimits,
    RedisLimits,
    provider_key,
    provider_limits,
)
from tests.fake_provider import (
    FakeProvider,
    fake_provider,  # noqa: F401 - fixture
    openai_text,
    rate_limited,
)

MESSAGES = [{"role": "user", "content": "hi"}]


def router(
    provider: FakeProvider, slept: list[float], limits: ProviderLimits | None, base: str = ""
) -> ModelRouter:
    def completion(**kwargs: Any) -> Any:
        return complete(max_retries=0, **kwargs)

    chosen = ModelSettings("openai/qwen-local", api_base=base or provider.openai_base)
    return ModelRouter.from_settings(
        chosen, completion=completion, sleep=slept.append, limits=limits
    )


@pytest.mark.parametrize("shared", ["redis", "local"])
def test_a_retry_after_seen_by_one_router_makes_the_other_wait(
    fake_provider: FakeProvider,  # noqa: F811
    shared: str,
) -> None:
    limits = None if shared == "redis" else LocalLimits()  # None: the process's (Redis here)
    first_slept: list[float] = []
    second_slept: list[float] = []
    first = router(fake_provider, first_slept, limits)
    second = router(fake_provider, second_slept, limits)
    fake_provider.answer(rate_limited(retry_after=5), openai_text("one"), openai_text("two"))
    assert first.step(MESSAGES, []).content == "one"
    assert first_slept == [5.0]  # its own retry-after, once
    asked_at = len(fake_provider.requests)
    assert second.step(MESSAGES, []).content == "two"
    assert len(second_slept) == 1
    assert 4.0 < second_slept[0] <= 5.0  # waited for the provider before its request
    assert len(fake_provider.requests) == asked_at + 1  # and then asked once, no 429
    assert "rate limited for every worker" in " ".join(second.notes)


def test_another_provider_key_does_not_wait(fake_provider: FakeProvider) -> None:  # noqa: F811
    limits = LocalLimits()
    first_slept: list[float] = []
    other_slept: list[float] = []
    fake_provider.answer(rate_limited(retry_after=5), openai_text("one"), openai_text("two"))
    router(fake_provider, first_slept, limits).step(MESSAGES, [])
    other = router(fake_provider, other_slept, limits, base=f"{fake_provider.url}/other/v1")
    assert provider_key(other.model, other.endpoint) != provider_key(
        "openai/qwen-local", {"api_base": fake_provider.openai_base}
    )
    assert other.step(MESSAGES, []).content == "two"
    assert other_slept == []


def test_the_redis_limiter_is_shared_between_processes() -> None:
    assert settings.REDIS_URL, "these tests run with Redis"
    assert isinstance(provider_limits(), RedisLimits)
    elsewhere = RedisLimits(settings.REDIS_URL)  # another worker's connection
    key = provider_key("anthropic/claude-x", {})
    until = time.time() + 30
    provider_limits().block(key, until)
    assert elsewhere.blocked_until(key) == pytest.approx(until)
    elsewhere.block(key, until - 10)  # an earlier time never shortens a block
    assert provider_limits().blocked_until(key) == pytest.approx(until)
    assert provider_limits().blocked_until(provider_key("openai/x", {})) == 0.0
