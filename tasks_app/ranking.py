"""The ranking of a best-of-N round's attempts: pure values in, an order and its words
out (docs/best-of-n.md).

Best first, by, in turn:

1. eligible: verification passed and the attempt changed something (an attempt that
   changed nothing would be refused at merge as an empty result); of the others, those
   that passed come first, for the comparison page;
2. the model review's verdict, when there is one (``approve`` before none or
   ``no_verdict`` before ``request_changes``): the model review of each verified
   attempt gives it (``engine.extensions.attempt_verdicts``, registered by
   ``tasks_app.features.model_review``; none when the project's policy turns it off);
3. the smaller diff (lines added plus removed);
4. the lower cost;
5. the lower attempt number: the deterministic tie-break (attempt 1 runs the likeliest
   variant).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from decimal import Decimal
from typing import Any

# How a review verdict orders attempts that otherwise tie; an attempt without one, or
# whose review failed (``no_verdict``), sits between approved and rejected ones.
VERDICT_ORDER = {"approve": 0, None: 1, "comment": 1, "no_verdict": 1, "request_changes": 2}


@dataclass(frozen=True)
class Candidate:
    unit: int
    attempt: int
    passed: bool
    changed_lines: int
    cost: Decimal
    verdict: str | None = None
    variant: str = ""

    @property
    def eligible(self) -> bool:
        return self.passed and self.changed_lines > 0

    def key(self) -> tuple[int, int, int, Decimal, int]:
        return (
            0 if self.eligible else 1 if self.passed else 2,
            VERDICT_ORDER.get(self.verdict, 1),
            self.changed_lines,
            self.cost,
            self.attempt,
        )

    def row(self) -> dict[str, Any]:
        """As stored on the round (``AttemptRound.ranking``)."""
        return {**asdict(self), "cost": str(self.cost), "eligible": self.eligible}


def rank(candidates: list[Candidate]) -> list[Candidate]:
    """``candidates`` best first (the order is total: no two share an attempt number)."""
    return sorted(candidates, key=Candidate.key)


def choice_reason(ranked: list[Candidate]) -> str:
    """Why the first of ``ranked`` is kept, in words a person reads on the task's
    comparison page; or why none is."""
    passed = sum(1 for each in ranked if each.passed)
    head = f"{passed} of {len(ranked)} attempts passed verification"
    if not ranked or not ranked[0].eligible:
        if passed:
            return f"{head}, and none of those changed anything: no attempt kept"
        return f"{head}: no attempt kept"
    best = ranked[0]
    words = [f"attempt {best.attempt} kept: {head}"]
    rivals = [each for each in ranked[1:] if each.eligible]
    if any(each.verdict is not None for each in ranked):
        words.append(_verdicts(ranked))
    if not rivals:
        words.append(f"it is the only one that did ({_size(best)})")
        return "; ".join(words)
    runner = rivals[0]
    words.append(_beaten_by(best, runner))
    return "; ".join(words)


def _verdicts(ranked: list[Candidate]) -> str:
    """The model review's verdict on each attempt that passed, best first."""
    said = [
        f"attempt {each.attempt} {each.verdict or 'not reviewed'}" for each in ranked if each.passed
    ]
    return "the model review's verdicts: " + ", ".join(said)


def _beaten_by(best: Candidate, runner: Candidate) -> str:
    """What decided between ``best`` and the next eligible attempt."""
    if VERDICT_ORDER.get(best.verdict, 1) != VERDICT_ORDER.get(runner.verdict, 1):
        return (
            f"the review preferred it to attempt {runner.attempt} "
            f"({runner.verdict or 'no verdict'})"
        )
    if best.changed_lines != runner.changed_lines:
        return (
            f"the smallest diff: {_size(best)} against {_size(runner)} of attempt {runner.attempt}"
        )
    if best.cost != runner.cost:
        return (
            f"the same size as attempt {runner.attempt} ({_size(best)}) and cheaper: "
            f"${best.cost:.4f} against ${runner.cost:.4f}"
        )
    return (
        f"it ties with attempt {runner.attempt} in size ({_size(best)}) and cost: "
        "the lower attempt number is kept"
    )


def _size(candidate: Candidate) -> str:
    lines = candidate.changed_lines
    return f"{lines} changed line{'' if lines == 1 else 's'}"


def patch_changed_lines(patch: str) -> int:
    """Lines added plus removed in a git patch (its file headers not counted)."""
    count, in_hunk = 0, False
    for line in patch.splitlines():
        if line.startswith("diff --git "):
            in_hunk = False
        elif line.startswith("@@"):
            in_hunk = True
        elif in_hunk and line.startswith(("+", "-")):
            count += 1
    return count


def variant_label(variant: dict[str, Any]) -> str:
    """An attempt's variant in a few words: ``smart · gpt-4o · temperature 0.4``."""
    parts = [str(variant[key]) for key in ("model_mode", "model") if variant.get(key)]
    if variant.get("temperature") is not None:
        parts.append(f"temperature {variant['temperature']}")
    return " · ".join(parts) or "the session's model"


def ranked_from_rows(rows: list[dict[str, Any]]) -> list[Candidate]:
    """The ranking as stored on a round (``Candidate.row``), back as values."""
    fields = ("unit", "attempt", "passed", "changed_lines", "verdict", "variant")
    return [
        Candidate(**{name: row[name] for name in fields}, cost=Decimal(row["cost"])) for row in rows
    ]
