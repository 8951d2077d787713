"""Stuck-loop detection: a sliding window over recent tool calls or unit results.

A window is stuck when its tail repeats with a period of one or two — A A A A or
A B A B A B — more often than ``repeats`` times. Pure: lists in, a verdict out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

WINDOW = 10
REPEATS = 3  # A→B→A→B→A→B is three repetitions of period two


@dataclass(frozen=True)
class Stuck:
    pattern: tuple[str, ...]
    repeats: int

    def describe(self) -> str:
        return f"{' → '.join(self.pattern)} repeated {self.repeats} times"


def detect(history: Sequence[str], *, window: int = WINDOW, repeats: int = REPEATS) -> Stuck | None:
    recent = list(history[-window:])
    for period in (1, 2):
        count = _tail_repeats(recent, period)
        if count >= repeats and (period == 1 or recent[-1] != recent[-2]):
            return Stuck(tuple(recent[-period:]), count)
    return None


def _tail_repeats(items: list[str], period: int) -> int:
    """How many times the last ``period`` items repeat back to back at the end."""
    if len(items) < period:
        return 0
    pattern = items[-period:]
    count = 0
    end = len(items)
    while end - period >= 0 and items[end - period : end] == pattern:
        count += 1
        end -= period
    return count
