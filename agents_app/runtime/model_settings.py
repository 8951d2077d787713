"""Which model to call for a model mode, where, with which key, and how it calls tools.

Every mode (fast, smart, deep, and the fallback) has, from the environment:

- ``SF_MODEL_<MODE>``: the litellm model name (``openai/qwen2.5-coder-1.5b``);
- ``SF_MODEL_<MODE>_API_BASE``: the server's base URL (a local llama.cpp, Ollama or vLLM
  server through litellm's OpenAI-compatible provider), passed to litellm as ``api_base``;
- ``SF_MODEL_<MODE>_API_KEY``: its key, passed as ``api_key`` (else litellm reads the
  provider's own variable, ``OPENAI_API_KEY`` …);
- ``SF_MODEL_<MODE>_TOOL_CALLS``: ``auto`` (default), ``native``, ``text`` or
  ``json_schema`` — see ``agents_app.schemas.ToolCalls``;
- ``SF_MODEL_<MODE>_CONTEXT_WINDOW``: the model's input window in tokens (unset: what
  litellm knows of the model, else 8192 — ``agents_app.runtime.context``);
- ``SF_MODEL_<MODE>_MAX_TOKENS``: the most an answer may use (unset: a quarter of the
  window, at most ``SF_MODEL_MAX_TOKENS``: an 8k local model must not reserve half its
  window for an answer that is rarely longer than a file);
- ``SF_MODEL_<MODE>_TEMPERATURE`` and ``_TOP_P``: sampling, sent with every request
  (unset: temperature 0, the likeliest answer, as code wants; top_p unsent). A provider
  litellm knows not to take them (reasoning models) is sent neither;
- ``SF_MODEL_<MODE>_PROMPT_PROFILE``: ``full``, ``compact`` (fewer tools, shorter
  schemas and system prompt: the prompt is a local model's cost) or ``auto`` (compact
  for a window of ``COMPACT_WINDOW`` tokens or less).

A project's policy can override any of them per mode (``models: {smart: {…}}``); a key
is named there by the variable that holds it (``api_key_env``), never stored in the
database. A project's ``api_base`` must resolve to public addresses (``sf_core.netguard``)
unless it is one of the server's own ``SF_MODEL_<MODE>_API_BASE`` or its host is in
``SF_NET_ALLOW_HOSTS``; checked when the settings are chosen, and pinned: litellm gets an
OpenAI client (``pinned_client``) whose connections go through ``sf_core.netguard``'s
guarded transport, which resolves the name once per connection, checks every address
and connects to the address it checked (a name that answers a public address to the
first lookup and a private one to the next is refused at the connection). So a project's
``api_base`` is for an ``openai/<model>`` (an OpenAI-compatible server), the only
provider whose client litellm takes ready-made.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings

from agents_app.runtime.litellm_import import litellm_module
from agents_app.schemas import PromptProfile
from agents_app.schemas import ToolCalls as ToolCallStyle
from sf_core.errors import SfError
from sf_core.netguard import AddressRefused, checked_addresses, guarded_client

MODES = ("fast", "smart", "deep", "fallback")
# A base URL without a key: OpenAI-compatible local servers ignore the key, but the
# openai client refuses to send a request without one.
LOCAL_PLACEHOLDER_KEY = "sf-local"
DEFAULT_TEMPERATURE = 0.0
DEFAULT_CONTEXT_WINDOW = 8192  # tokens, as context.DEFAULT_CONTEXT_WINDOW
COMPACT_WINDOW = 16_384  # tokens: a window this small is a small (local) model's
ANSWER_SHARE = 4  # an answer's default max_tokens: a quarter of the window
MIN_ANSWER_TOKENS = 256
SAMPLING_KEYS = ("temperature", "top_p")


class ModelNotConfigured(SfError):
    """No model is configured for what was asked."""


@dataclass(frozen=True)
class ModelSettings:
    model: str
    api_base: str = ""
    api_key: str = ""
    tool_calls: ToolCallStyle = ToolCallStyle.AUTO
    context_window: int = 0  # tokens; 0: not configured
    pinned: bool = False  # a project's api_base: connections only to addresses checked
    max_tokens: int = 0  # the answer's; 0: not configured (``answer_tokens``)
    temperature: float | None = None  # None: DEFAULT_TEMPERATURE
    top_p: float | None = None  # None: not sent
    prompt_profile: PromptProfile = PromptProfile.AUTO

    def window(self) -> int:
        """The model's input window: configured, else litellm's, else the default (as
        ``context.context_window``, which imports the router: not imported here)."""
        if self.context_window > 0:
            return self.context_window
        litellm = litellm_module()
        try:
            known = int(litellm.get_model_info(self.model).get("max_input_tokens") or 0)
        except Exception:  # litellm raises for models it has not mapped
            known = 0
        return known or DEFAULT_CONTEXT_WINDOW

    def answer_tokens(self, cap: int | None = None) -> int:
        """The answer's ``max_tokens``: configured, else a quarter of the window; never
        more than ``cap`` (``SF_MODEL_MAX_TOKENS``) unless configured for the model."""
        if self.max_tokens:
            return self.max_tokens
        cap = cap if cap is not None else int(getattr(settings, "SF_MODEL_MAX_TOKENS", 4096))
        return max(MIN_ANSWER_TOKENS, min(cap, self.window() // ANSWER_SHARE))

    def sampling(self) -> dict[str, float]:
        """``temperature`` (and ``top_p`` when set) for litellm, minus what litellm knows
        the model refuses (a reasoning model takes no temperature)."""
        wanted = {
            "temperature": DEFAULT_TEMPERATURE if self.temperature is None else self.temperature,
            "top_p": self.top_p,
        }
        accepted = supported_params(self.model)
        return {
            key: value
            for key, value in wanted.items()
            if value is not None and (accepted is None or key in accepted)
        }

    def resolved_profile(self) -> PromptProfile:
        """``auto`` is compact for a small window, full otherwise."""
        if self.prompt_profile != PromptProfile.AUTO:
            return self.prompt_profile
        return PromptProfile.COMPACT if self.window() <= COMPACT_WINDOW else PromptProfile.FULL

    def litellm_options(self) -> dict[str, Any]:
        """What litellm needs besides the model name: ``api_base`` and ``api_key``."""
        options: dict[str, Any] = {}
        if self.api_base:
            options["api_base"] = self.api_base
        if self.api_key:
            options["api_key"] = self.api_key
        elif self.api_base:
            options["api_key"] = LOCAL_PLACEHOLDER_KEY
        if self.pinned and self.api_base:
            options["client"] = pinned_client(self.api_base, options["api_key"])
        return options

    def resolved_style(self) -> ToolCallStyle:
        """The style to use: ``auto`` decided from what litellm knows of the model."""
        if self.tool_calls != ToolCallStyle.AUTO:
            return self.tool_calls
        return ToolCallStyle.NATIVE if native_tool_calls_known(self.model) else ToolCallStyle.TEXT


def pinned_client(api_base: str, api_key: str) -> Any:
    """An OpenAI client for ``api_base`` whose every connection goes to an address
    ``sf_core.netguard`` checked (no proxy from the environment, no redirects, no
    retries of its own: the router owns those)."""
    from openai import OpenAI

    return OpenAI(api_key=api_key, base_url=api_base, http_client=guarded_client(), max_retries=0)


def native_tool_calls_known(model: str) -> bool:
    """Whether litellm's model table says ``model`` calls tools natively."""
    litellm = litellm_module()
    try:
        return bool(litellm.supports_function_calling(model=model))
    except Exception:  # litellm raises for a provider it cannot map
        return False


def supported_params(model: str) -> set[str] | None:
    """The OpenAI parameters litellm says ``model`` takes; None when it cannot tell."""
    litellm = litellm_module()
    try:
        params = litellm.get_supported_openai_params(model=model)
    except Exception:  # litellm raises for a provider it cannot map
        return None
    return set(params) if params else None


def env_settings(mode: str) -> dict[str, Any]:
    """The environment's endpoint settings for ``mode`` (read once by sf_web.settings)."""
    return dict(getattr(settings, "SF_MODEL_ENDPOINTS", {}).get(mode, {}))


def model_settings_for(
    model_mode: str, explicit: str | None = None, project_models: Mapping[Any, Any] | None = None
) -> ModelSettings:
    """The model, endpoint and tool-call style for ``model_mode``.

    ``explicit`` (``--model``) names the model and keeps the mode's endpoint; a
    project's ``models`` override (from its policy) wins over the environment field by
    field. Raises ``ModelNotConfigured`` naming the variable to set.
    """
    if model_mode not in MODES:
        raise ModelNotConfigured(
            f"unknown model mode {model_mode!r}; accepted: {', '.join(MODES[:3])}"
        )
    endpoint = env_settings(model_mode)
    chosen = ModelSettings(
        model=str(getattr(settings, f"SF_MODEL_{model_mode.upper()}", "") or ""),
        api_base=endpoint.get("api_base", ""),
        api_key=endpoint.get("api_key", ""),
        tool_calls=ToolCallStyle(endpoint.get("tool_calls") or ToolCallStyle.AUTO),
        context_window=int(endpoint.get("context_window") or 0),
        max_tokens=int(endpoint.get("max_tokens") or 0),
        temperature=endpoint.get("temperature"),
        top_p=endpoint.get("top_p"),
        prompt_profile=PromptProfile(endpoint.get("prompt_profile") or PromptProfile.AUTO),
    )
    override = (project_models or {}).get(model_mode)
    if override:
        chosen = _apply_override(chosen, model_mode, override)
    if explicit:
        chosen = replace(chosen, model=explicit)
    if chosen.pinned and chosen.model.partition("/")[0] != "openai":
        raise ModelNotConfigured(
            f"the project's model settings for {model_mode}: an api_base of the project's "
            f"own needs an openai/<model> (an OpenAI-compatible server), not {chosen.model}: "
            "SF pins its connections to the addresses it checked through the OpenAI client"
        )
    if not chosen.model and model_mode != "fallback":
        variable = f"SF_MODEL_{model_mode.upper()}"
        raise ModelNotConfigured(
            f"no model configured for model mode {model_mode}: set {variable} to a litellm "
            "model name such as anthropic/claude-sonnet-4-5 or openai/gpt-4o, with the "
            "provider's key variable; or replay a recorded trace (--replay TRACE)"
        )
    return chosen


def _project_api_base_check(mode: str, url: str) -> bool:
    """A project's ``api_base`` is a public address, unless it is one the server
    itself configured (``SF_MODEL_<MODE>_API_BASE``: the local model on 127.0.0.1) or
    its host is in the server's ``SF_NET_ALLOW_HOSTS``: a project must not make the
    worker post its prompts (and a key) into the server's own network. True when the
    connections must be pinned (not one of the server's own)."""
    own = {
        str(endpoint.get("api_base") or "").rstrip("/")
        for endpoint in getattr(settings, "SF_MODEL_ENDPOINTS", {}).values()
    }
    if url.rstrip("/") in own - {""}:
        return False
    parts = urlsplit(url)
    try:
        checked_addresses(parts.hostname or "", parts.port or _DEFAULT_PORTS[parts.scheme])
    except (AddressRefused, ValueError, KeyError) as exc:
        raise ModelNotConfigured(
            f"the project's model settings for {mode}: api_base {url} is refused: {exc}"
        ) from None
    return True


_DEFAULT_PORTS = {"http": 80, "https": 443}


def _apply_override(base: ModelSettings, mode: str, override: Any) -> ModelSettings:
    values = override if isinstance(override, dict) else override.model_dump(exclude_none=True)
    changed: dict[str, Any] = {
        key: values[key]
        for key in ("model", "api_base", "context_window", "max_tokens", "temperature", "top_p")
        if values.get(key) is not None
    }
    if changed.get("api_base"):
        changed["pinned"] = _project_api_base_check(mode, changed["api_base"])
    if values.get("tool_calls"):
        changed["tool_calls"] = ToolCallStyle(values["tool_calls"])
    if values.get("prompt_profile"):
        changed["prompt_profile"] = PromptProfile(values["prompt_profile"])
    key_variable = values.get("api_key_env")
    if key_variable:
        key = os.environ.get(key_variable, "").strip()
        if not key:
            raise ModelNotConfigured(
                f"the project's model settings for {mode} take the key from {key_variable}, "
                "which is not set"
            )
        changed["api_key"] = key
    return replace(base, **changed)
