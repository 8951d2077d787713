"""Plain values the engine's modules pass each other: a unit's options and its report."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.db import InterfaceError, OperationalError

from agents_app.runtime.replay import Replay
from sf_core.git import GitError

# What the engine meets that is the system's fault, not the agent's or its task's: git
# under SF (a lock, a full disk), the file system, the database connection. Anything
# else SF raises is a bug, left to the sweep (``engine.system_faults``).
SYSTEM_FAULTS: tuple[type[BaseException], ...] = (
    GitError,
    OSError,
    OperationalError,
    InterfaceError,
)


@dataclass(frozen=True)
class UnitOptions:
    model: str | None = None  # an explicit model overrides the session's model mode
    replay: Replay | None = None
    answers: dict[str, str] = field(default_factory=dict)
    completion: Callable[..., Any] | None = None  # litellm's completion, or a test's
    # A best-of-N attempt's variant (``engine.attempts``): its model mode instead of the
    # session's, and its sampling temperature instead of the mode's.
    model_mode: str | None = None
    temperature: float | None = None


@dataclass(frozen=True)
class UnitReport:
    task_id: int
    unit_id: int
    attempt: int
    outcome: str
    task_status: str
    detail: str = ""
