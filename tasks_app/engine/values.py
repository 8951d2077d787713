"""Plain values the engine's modules pass each other: a unit's options and its report."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agents_app.runtime.replay import Replay


@dataclass(frozen=True)
class UnitOptions:
    model: str | None = None  # an explicit model overrides the session's model mode
    replay: Replay | None = None
    answers: dict[str, str] = field(default_factory=dict)
    completion: Callable[..., Any] | None = None  # litellm's completion, or a test's


@dataclass(frozen=True)
class UnitReport:
    task_id: int
    unit_id: int
    attempt: int
    outcome: str
    task_status: str
    detail: str = ""
