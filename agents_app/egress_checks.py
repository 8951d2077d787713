"""The start-up check of sandboxed egress (``agents_app.runtime.egress``).

| id      | what                                                                       |
| ------- | -------------------------------------------------------------------------- |
| sf.W012 | socat is missing: a sandboxed command with an egress grant cannot run      |
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.apps import AppConfig
from django.core.checks import CheckMessage, Tags, Warning, register

from agents_app.runtime.egress import SOCAT, bridge_problem
from agents_app.runtime.sandbox import sandbox_state


@register(Tags.security)
def check_egress_bridge(app_configs: Sequence[AppConfig] | None, **_: Any) -> list[CheckMessage]:
    if not sandbox_state().sandboxed or not bridge_problem():
        return []
    return [
        Warning(
            f"socat is not installed at {SOCAT}: a sandboxed command whose project grants "
            "egress (or runs under the unrestricted profile) fails before it starts.",
            hint="Install socat (scripts/setup.sh does: apt-get install socat).",
            id="sf.W012",
        )
    ]
