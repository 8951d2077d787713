"""Model calls: every one goes through litellm, imported only when a model is called.

``model_mode`` (fast, smart, deep) maps to ``SF_MODEL_FAST`` / ``SF_MODEL_SMART`` /
``SF_MODEL_DEEP``; an explicit model name overrides the mode.
"""

from __future__ import annotations

import os
from typing import Any

from django.conf import settings

from sf_web.errors import SfError

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
