"""The start-up check of the OS sandbox (``agents_app.runtime.sandbox``).

| id      | what                                                                       |
| ------- | -------------------------------------------------------------------------- |
| sf.W010 | bubblewrap is missing or cannot create namespaces: profiles above normal are refused |
| sf.W011 | SF_SANDBOX=off: the operator runs agent and verify commands without the sandbox |

Warnings, not errors: without the sandbox SF still runs sessions up to ``normal``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.apps import AppConfig
from django.core.checks import CheckMessage, Tags, Warning, register

from agents_app.runtime.sandbox import sandbox_state


@register(Tags.security)
def check_sandbox(app_configs: Sequence[AppConfig] | None, **_: Any) -> list[CheckMessage]:
    state = sandbox_state()
    if state.mode == "unavailable":
        return [
            Warning(
                f"The OS sandbox is unavailable: {state.detail}. Agent and verify commands "
                "run without it, and the trusted and unrestricted profiles are refused.",
                hint="Install bubblewrap (scripts/setup.sh does: apt-get install bubblewrap), "
                "or set SF_SANDBOX=off to allow every profile without the sandbox.",
                id="sf.W010",
            )
        ]
    if state.mode == "off":
        return [
            Warning(
                "SF_SANDBOX=off: agent and verify commands run without the OS sandbox "
                "(the permission gate is the only wall).",
                hint="Unset SF_SANDBOX to run them in bubblewrap.",
                id="sf.W011",
            )
        ]
    return []
