"""Model calls: every one goes through litellm, imported only when a model is called.

``model_mode`` (fast, smart, deep) maps to ``SF_MODEL_FAST`` / ``SF_MODEL_SMART`` /
``SF_MODEL_DEEP``; an explicit model name overrides the mode.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from django.conf import settings

from sf_core.errors import SfError

MODE_SETTINGS = {"fast": "SF_MODEL_FAST", "smart": "SF_MODEL_SMART", "deep": "SF_MODEL_DEEP"}


class ModelNotConfigured(SfError):
    """No model is configured for what was asked."""


def model_for(model_mode: str, explicit: str | None = None) -> str:
    """The litellm model name for ``model_mode``, unless ``explicit`` names one."""
    if explicit:
        return explicit
    variable = MODE_SETTINGS.get(model_mode)
    if variable is None:
        raise ModelNotConfigured(
            f"unknown model mode {model_mode!r}; accepted: {', '.join(MODE_SETTINGS)}"
        )
    model = getattr(settings, variable, "")
    if not model:
        raise ModelNotConfigured(
            f"no model configured for model mode {model_mode}: set {variable} "
            "(or SF_MODEL_FAST / SF_MODEL_SMART / SF_MODEL_DEEP) to a litellm model name such as "
            "anthropic/claude-sonnet-4-5 or openai/gpt-4o, with the provider's key variable; "
            "or run offline with a recorded trace (--replay TRACE)"
        )
    return str(model)


def litellm_module() -> Any:
    """Import litellm on first use (4 to 5 s), never fetching its price map from the internet."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    return litellm


def complete(*, model: str, messages: list[dict[str, Any]], **options: Any) -> Any:
    """One chat completion through litellm; returns litellm's ``ModelResponse``."""
    return litellm_module().completion(model=model, messages=messages, **options)


# --- one model step, with the provider's failures handled -----------------------------

RATE_LIMIT_DEFAULT_WAIT = 60.0
MAX_RATE_LIMIT_WAITS = 5
MAX_SERVER_RETRIES = 3


class ProviderAuthError(SfError):
    """The provider refused our credentials or billing: the session must pause."""


class ProviderUnavailable(SfError):
    """The provider kept failing after the waits, retries and the fallback model."""


@dataclass(frozen=True)
class ToolCallRequest:
    id: str
    name: str
    arguments: str  # JSON text, exactly as the model wrote it


@dataclass(frozen=True)
class ModelStep:
    model: str
    content: str
    tool_calls: list[ToolCallRequest]
    tokens_in: int
    tokens_out: int
    cost: Decimal
    message: dict[str, Any]  # the assistant message, to append to the conversation


@dataclass
class ModelRouter:
    """Calls a model through litellm: waits out rate limits (``retry-after``, else 60 s),
    backs off on 5xx and then switches to the fallback model; auth and billing errors
    raise ``ProviderAuthError`` so the caller pauses the session with the reason."""

    model: str
    fallback: str = ""
    completion: Callable[..., Any] = complete
    sleep: Callable[[float], None] = time.sleep
    notes: list[str] = field(default_factory=list)

    def step(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> ModelStep:
        litellm = litellm_module()
        current, waits, failures = self.model, 0, 0
        while True:
            try:
                response = self.completion(model=current, messages=messages, tools=tools or None)
                return _model_step(current, response)
            except litellm.RateLimitError as exc:
                waits += 1
                if waits > MAX_RATE_LIMIT_WAITS:
                    raise ProviderUnavailable(
                        f"{current}: still rate limited after {waits - 1} waits"
                    ) from exc
                delay = _retry_after(exc)
                self.notes.append(f"{current} rate limited; waiting {delay:g} s")
                self.sleep(delay)
            except (
                litellm.AuthenticationError,
                litellm.PermissionDeniedError,
                litellm.BudgetExceededError,
            ) as exc:
                raise ProviderAuthError(
                    f"{current}: the provider refused the request: {_short(exc)}"
                ) from exc
            except litellm.PaymentRequiredError as exc:
                raise ProviderAuthError(f"{current}: billing problem: {_short(exc)}") from exc
            except _server_errors(litellm) as exc:
                failures += 1
                if failures <= MAX_SERVER_RETRIES:
                    delay = float(2**failures)
                    self.notes.append(f"{current} failed ({_short(exc)}); retrying in {delay:g} s")
                    self.sleep(delay)
                elif self.fallback and current != self.fallback:
                    self.notes.append(f"{current} keeps failing; switching to {self.fallback}")
                    current, failures = self.fallback, 0
                else:
                    raise ProviderUnavailable(f"{current}: {_short(exc)}") from exc
            except Exception as exc:
                # Anything else litellm raises (a bad request, a context window too
                # small) ends the unit with the provider's words, not a crash.
                if type(exc).__module__.split(".")[0] not in ("litellm", "openai"):
                    raise
                raise ProviderUnavailable(f"{current}: {_short(exc)}") from exc


def _server_errors(litellm: Any) -> tuple[type[Exception], ...]:
    """5xx and connection failures: worth a retry, then the fallback model."""
    return (
        litellm.InternalServerError,
        litellm.ServiceUnavailableError,
        litellm.BadGatewayError,
        litellm.APIConnectionError,
        litellm.Timeout,
    )


def _model_step(model: str, response: Any) -> ModelStep:
    message = response.choices[0].message
    calls = [
        ToolCallRequest(
            id=call.id, name=call.function.name, arguments=call.function.arguments or "{}"
        )
        for call in (message.tool_calls or [])
    ]
    usage = getattr(response, "usage", None)
    assistant: dict[str, Any] = {"role": "assistant", "content": message.content or ""}
    if calls:
        assistant["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in calls
        ]
    return ModelStep(
        model=model,
        content=message.content or "",
        tool_calls=calls,
        tokens_in=int(getattr(usage, "prompt_tokens", 0) or 0),
        tokens_out=int(getattr(usage, "completion_tokens", 0) or 0),
        cost=_cost(response),
        message=assistant,
    )


def _cost(response: Any) -> Decimal:
    """Cost from litellm's accounting; a model without a known price costs 0."""
    hidden = getattr(response, "_hidden_params", {}) or {}
    if hidden.get("response_cost") is not None:
        return Decimal(str(hidden["response_cost"]))
    try:
        return Decimal(str(litellm_module().completion_cost(completion_response=response)))
    except Exception:  # litellm raises for models it has no price for
        return Decimal("0")


def _retry_after(exc: Exception) -> float:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None) or getattr(exc, "headers", None) or {}
    value = headers.get("retry-after") if hasattr(headers, "get") else None
    try:
        return max(0.0, float(value)) if value is not None else RATE_LIMIT_DEFAULT_WAIT
    except ValueError:
        return RATE_LIMIT_DEFAULT_WAIT


def _short(exc: Exception) -> str:
    return str(getattr(exc, "message", None) or exc).splitlines()[0][:300]
