"""What the agent loop and the gate agree on, and nothing else: the loop
(``agents_app.runtime.loop``) asks a ``Gate`` about each tool call and gets a
``GateVerdict``; the session gate (``agents_app.gate.session``) implements it. Both
import this module; the gate imports nothing of the runtime. No Django here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from sf_core.errors import SfError


@dataclass
class GateVerdict:
    decision: str  # allow | ask | deny
    rule: str
    risk_class: str
    reason: str
    decision_id: int | None = None


class StaleReading(SfError):
    """The gate's reading of the session changed (steering, a pause, a /stop) before it
    stored its decision: nothing was stored, and the dispatch point is gone through
    again on a fresh reading (``AgentLoop._dispatch``)."""


class Gate(Protocol):
    def offered_tools(self) -> list[str]: ...

    def normalize(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]: ...

    def check(self, tool: str, arguments: dict[str, Any], input_hash: str) -> GateVerdict: ...
