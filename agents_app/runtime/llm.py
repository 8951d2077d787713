"""Model calls: every one goes through litellm, imported only when a model is called.

``model_mode`` (fast, smart, deep) maps to ``SF_MODEL_FAST`` / ``SF_MODEL_SMART`` /
``SF_MODEL_DEEP``; an explicit model name overrides the mode. Where the model is served,
its key and how it calls tools come with it (``model_settings``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from django.conf import settings

from agents_app.runtime.litellm_import import litellm_module
from agents_app.runtime.model_settings import (
    SAMPLING_KEYS,
    ModelNotConfigured,
    ModelSettings,
    PromptProfile,
    ToolCallStyle,
    model_settings_for,
)
from agents_app.runtime.ratelimit import (
    MAX_SHARED_WAIT,
    ProviderLimits,
    provider_key,
    provider_limits,
)
from agents_app.runtime.toolcalls import request_options
from agents_app.runtime.wire import assistant_message, synthesised_id, tools_for
from agents_app.schemas import ModelPrice
from sf_core.errors import SfError

__all__ = ["ModelNotConfigured", "ModelSettings", "model_for", "model_settings_for"]


def model_for(
    model_mode: str, explicit: str | None = None, project_models: Mapping[Any, Any] | None = None
) -> str:
    """The litellm model name for ``model_mode``, unless ``explicit`` names one."""
    return model_settings_for(model_mode, explicit, project_models).model


def complete(*, model: str, messages: list[dict[str, Any]], **options: Any) -> Any:
    """One chat completion through litellm; returns litellm's ``ModelResponse``.

    The provider's client never retries by itself (``max_retries=0``): the router owns
    the waits, the shared rate limit and the fallback, and a client retrying 429s and
    5xx twice underneath would triple every request the router makes."""
    options.setdefault("max_retries", 0)
    return litellm_module().completion(model=model, messages=messages, **options)


# --- one model step, with the provider's failures handled -----------------------------

RATE_LIMIT_DEFAULT_WAIT = 60.0
MAX_RATE_LIMIT_WAITS = 5
MAX_SERVER_RETRIES = 3
DEFAULT_MAX_TOKENS = 4096


class AnswerCut(Exception):
    """The model's answer was cut short on purpose (a person cancelled the unit): not
    the provider's failure, so the router neither retries nor falls back."""


class ProviderAuthError(SfError):
    """The provider refused our credentials or billing: the session must pause."""


class ProviderUnavailable(SfError):
    """The provider kept failing after the waits, retries and the fallback model."""


class ProviderOutage(ProviderUnavailable):
    """The provider is down or keeps rate limiting (5xx, connection errors, timeouts,
    429s past the waits): worth trying again later, unlike a refused request."""


class ContextWindowExceeded(ProviderUnavailable):
    """The provider refused the request as longer than the model's context window; the
    loop cuts the conversation (``context``) and asks once more."""

    def __init__(self, message: str, provider_text: str = "") -> None:
        super().__init__(message)
        self.provider_text = provider_text  # the provider's own words (they may name the limit)


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
    message: dict[str, Any] | None  # the assistant message for the conversation (None: empty)
    refusal: str = ""  # a call written as text that was refused: said back to the model
    from_text: bool = False  # the tool call was recognised in the text (``textcalls``)
    correctable: bool = False  # the refusal is of a recognised call (unknown tool, bad arguments)
    finish_reason: str = "stop"  # "length": cut off at max_tokens
    note: str = (
        ""  # said to the model after its calls ran (e.g. the calls it wrote but were not run)
    )
    not_run: tuple[str, ...] = ()  # calls written in the text after the one that ran
    priced: bool = True  # False: neither litellm nor the project knows the model's price


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
    endpoint: dict[str, Any] = field(default_factory=dict)  # api_base, api_key for litellm
    fallback_endpoint: dict[str, Any] = field(default_factory=dict)
    tool_calls: ToolCallStyle = ToolCallStyle.NATIVE  # resolved, never auto
    max_tokens: int = DEFAULT_MAX_TOKENS  # the most a request asks for; "length" past it
    sampling: dict[str, float] = field(default_factory=dict)  # temperature, top_p
    prompt_profile: PromptProfile = PromptProfile.FULL  # resolved, never auto
    context_window: int = 0  # configured tokens; 0: litellm's number, else a default (context)
    limits: ProviderLimits | None = None  # "blocked until" per provider (None: the shared one)
    # A project's price per token of models litellm cannot price (self-hosted ones).
    prices: Mapping[str, ModelPrice] = field(default_factory=dict)
    _waited_until: float = field(default=0.0, init=False, repr=False)  # our own waits

    @classmethod
    def from_settings(
        cls, chosen: ModelSettings, fallback: ModelSettings | None = None, **extra: Any
    ) -> ModelRouter:
        cap = getattr(settings, "SF_MODEL_MAX_TOKENS", DEFAULT_MAX_TOKENS)
        extra.setdefault("max_tokens", chosen.answer_tokens(cap))
        extra.setdefault("context_window", chosen.context_window)
        extra.setdefault("sampling", chosen.sampling())
        extra.setdefault("prompt_profile", chosen.resolved_profile())
        return cls(
            model=chosen.model,
            endpoint=chosen.litellm_options(),
            tool_calls=chosen.resolved_style(),
            fallback=fallback.model if fallback else "",
            fallback_endpoint=fallback.litellm_options() if fallback else {},
            **extra,
        )

    def step(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        response_format: dict[str, Any] | None = None,
        max_tokens: int | None = None,
    ) -> ModelStep:
        """One model step. ``response_format`` constrains the answer (planning); a server
        that refuses it, or the sampling, is asked again without (the prompt says the
        format too). ``max_tokens``: the answer's room in the window, if smaller."""
        litellm = litellm_module()
        current, waits, failures = self.model, 0, 0
        while True:
            endpoint = self.endpoint if current == self.model else self.fallback_endpoint
            self._await_provider(current, endpoint)
            try:
                request = self._request(current, messages, tools, response_format, max_tokens)
                response = self.completion(model=current, **endpoint, **request)
                return _model_step(current, response, self.prices)
            except litellm.RateLimitError as exc:
                waits += 1
                self._rate_limited(current, endpoint, exc, waits)
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
                current, failures = self._server_failed(current, exc, failures + 1)
            except litellm.BadRequestError as exc:
                if isinstance(exc, litellm.ContextWindowExceededError):
                    raise ContextWindowExceeded(f"{current}: {_short(exc)}", str(exc)) from exc
                if self._sampling_refused(exc):
                    continue
                if response_format:
                    response_format = None  # the answer's format is in the prompt too
                    self.notes.append(
                        f"{current} refused the response format ({_short(exc)}); "
                        "asking for the JSON in the text"
                    )
                    continue
                if not self._schema_refused(litellm, exc):
                    raise ProviderUnavailable(f"{current}: {_short(exc)}") from exc
                # The server refused the JSON schema: recognise calls in text instead.
                self.tool_calls = ToolCallStyle.TEXT
                self.notes.append(
                    f"{current} refused the tool-call JSON schema ({_short(exc)}); "
                    "switching to tool calls recognised in text"
                )
            except Exception as exc:
                # Anything else litellm raises (a bad request, a context window too
                # small) ends the unit with the provider's words, not a crash.
                if type(exc).__module__.split(".")[0] not in ("litellm", "openai"):
                    raise
                raise ProviderUnavailable(f"{current}: {_short(exc)}") from exc

    def _rate_limited(
        self, current: str, endpoint: dict[str, Any], exc: Exception, waits: int
    ) -> None:
        """Wait out a 429; a ``retry-after`` is told to every router of the provider."""
        if waits > MAX_RATE_LIMIT_WAITS:
            raise ProviderOutage(f"{current}: still rate limited after {waits - 1} waits") from exc
        told = _retry_after_header(exc)
        delay = RATE_LIMIT_DEFAULT_WAIT if told is None else told
        if told is not None:
            until = time.time() + min(told, MAX_SHARED_WAIT)
            self._provider_limits().block(provider_key(current, endpoint), until)
        self.notes.append(f"{current} rate limited; waiting {delay:g} s")
        self._wait(delay)

    def _server_failed(self, current: str, exc: Exception, failures: int) -> tuple[str, int]:
        """Back off on a 5xx or a lost connection, then the fallback, then give up.
        Returns the model to call next and its failure count."""
        if failures <= MAX_SERVER_RETRIES:
            delay = float(2**failures)
            self.notes.append(f"{current} failed ({_short(exc)}); retrying in {delay:g} s")
            self._wait(delay)
            return current, failures
        if self.fallback and current != self.fallback:
            self.notes.append(f"{current} keeps failing; switching to {self.fallback}")
            return self.fallback, 0
        raise ProviderOutage(f"{current}: {_short(exc)}") from exc

    def _await_provider(self, current: str, endpoint: dict[str, Any]) -> None:
        """Wait while another router (any worker) was told the provider is rate limited;
        what we waited ourselves already counts."""
        until = self._provider_limits().blocked_until(provider_key(current, endpoint))
        wait = min(until - max(time.time(), self._waited_until), MAX_SHARED_WAIT)
        if wait > 0:
            self.notes.append(
                f"{current}: the provider is rate limited for every worker; waiting {wait:.1f} s"
            )
            self._wait(wait)

    def _wait(self, seconds: float) -> None:
        self.sleep(seconds)
        self._waited_until = max(self._waited_until, time.time() + seconds)

    def _provider_limits(self) -> ProviderLimits:
        return self.limits if self.limits is not None else provider_limits()

    def _request(
        self,
        current: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        response_format: dict[str, Any] | None,
        max_tokens: int | None,
    ) -> dict[str, Any]:
        """What litellm is sent besides the model and its endpoint."""
        request = request_options(self.tool_calls, tools_for(current, tools), messages)
        if response_format:
            request["response_format"] = response_format
        request["max_tokens"] = min(self.max_tokens, max_tokens or self.max_tokens)
        return {**self.sampling, **request}

    def _sampling_refused(self, exc: Exception) -> bool:
        """A 400 naming a sampling setting (a reasoning model takes no temperature 0):
        the settings are dropped for this router, noted, and the request sent again."""
        text = str(exc).lower()
        if not self.sampling or not any(key in text for key in SAMPLING_KEYS):
            return False
        self.notes.append(
            f"{self.model} refused the sampling settings {self.sampling} ({_short(exc)}); "
            "asking without them"
        )
        self.sampling = {}
        return True

    def _schema_refused(self, litellm: Any, exc: Exception) -> bool:
        """A 400 while the answer was constrained by a JSON schema (not a context overflow)."""
        return self.tool_calls == ToolCallStyle.JSON_SCHEMA and not isinstance(
            exc, litellm.ContextWindowExceededError
        )


def _server_errors(litellm: Any) -> tuple[type[Exception], ...]:
    """5xx and connection failures: worth a retry, then the fallback model."""
    return (
        litellm.InternalServerError,
        litellm.ServiceUnavailableError,
        litellm.BadGatewayError,
        litellm.APIConnectionError,
        litellm.Timeout,
    )


def _model_step(model: str, response: Any, prices: Mapping[str, ModelPrice]) -> ModelStep:
    choice = response.choices[0]
    message = choice.message
    calls = [
        ToolCallRequest(
            id=call.id or synthesised_id(),
            name=call.function.name,
            arguments=call.function.arguments or "{}",
        )
        for call in (message.tool_calls or [])
    ]
    usage = getattr(response, "usage", None)
    wire_calls = [
        {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
        for c in calls
    ]
    tokens_in = int(getattr(usage, "prompt_tokens", 0) or 0)
    tokens_out = int(getattr(usage, "completion_tokens", 0) or 0)
    cost, priced = _litellm_cost(response)
    if not priced and model in prices:
        cost, priced = prices[model].cost(tokens_in, tokens_out), True
    return ModelStep(
        model=model,
        content=message.content or "",
        tool_calls=calls,
        tokens_in=tokens_in,
        tokens_out=tokens_out,
        cost=cost,
        message=assistant_message(message, wire_calls),
        finish_reason=str(getattr(choice, "finish_reason", None) or "stop"),
        priced=priced,
    )


def _litellm_cost(response: Any) -> tuple[Decimal, bool]:
    """Cost from litellm's accounting, and whether litellm knew the price at all: a
    model it has no price for (a self-hosted one) is charged 0 and marked unpriced, so
    the session page and ``manage.py check`` can say so (``agents_app.costs``)."""
    hidden = getattr(response, "_hidden_params", {}) or {}
    if hidden.get("response_cost") is not None:
        return Decimal(str(hidden["response_cost"])), True
    try:
        return Decimal(str(litellm_module().completion_cost(completion_response=response))), True
    except Exception:  # litellm raises for models it has no price for
        return Decimal("0"), False


def _retry_after_header(exc: Exception) -> float | None:
    """The seconds a 429's ``retry-after`` header asks for (None: it says nothing).
    litellm keeps the provider's headers in ``litellm_response_headers``."""
    response = getattr(exc, "response", None)
    headers = (
        getattr(exc, "litellm_response_headers", None)
        or getattr(response, "headers", None)
        or getattr(exc, "headers", None)
        or {}
    )
    value = headers.get("retry-after") if hasattr(headers, "get") else None
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def _short(exc: Exception) -> str:
    return str(getattr(exc, "message", None) or exc).splitlines()[0][:300]
