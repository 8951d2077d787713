"""The mode badge (DESIGN §2): one function for the web chip and the terminal title.

Full ``SF build | autonomous | trusted | smart``; compact ``[B][A][T][S]`` for narrow
screens; ``repair`` and ``review`` always show full labels; paused shows ``paused ·``
(full) or ``P!`` (compact) with every part dimmed; autonomous pulses slowly.
"""

from __future__ import annotations

from dataclasses import dataclass

from agents_app.axes import Axes

SHOWN_AXES = ("work_mode", "run_control", "permission_profile", "model_mode")

# Colour names are theme roles (CSS variables --dim, --accent, --success, …).
COLOURS: dict[str, dict[str, str]] = {
    "work_mode": {
        "chat": "dim",
        "plan": "accent",
        "build": "success",
        "review": "warning",
        "repair": "error",
        "research": "info",
    },
    "run_control": {"manual": "dim", "assisted": "warning", "autonomous": "success"},
    "permission_profile": {
        "restricted": "success",
        "normal": "dim",
        "trusted": "warning",
        "unrestricted": "error",
    },
    # Not in the colour table of the spec: cheap is quiet, reasoning stands out.
    "model_mode": {"fast": "dim", "smart": "info", "deep": "accent"},
}

# One letter per value; review and repair never show compact, so R is free for research.
LETTERS: dict[str, dict[str, str]] = {
    "work_mode": {"chat": "C", "plan": "P", "build": "B", "research": "R"},
    "run_control": {"manual": "M", "assisted": "S", "autonomous": "A"},
    "permission_profile": {"restricted": "R", "normal": "N", "trusted": "T", "unrestricted": "U"},
    "model_mode": {"fast": "F", "smart": "S", "deep": "D"},
}
CRITICAL_WORK_MODES = frozenset({"repair", "review"})


@dataclass(frozen=True)
class BadgePart:
    axis: str
    value: str
    letter: str
    colour: str
    pulsing: bool


@dataclass(frozen=True)
class Badge:
    parts: tuple[BadgePart, ...]
    paused: bool
    critical: bool
    finished: str = ""  # the session's status once its work ended (completed, failed)

    @property
    def labels(self) -> str:
        return " | ".join(part.value for part in self.parts)

    @property
    def full_text(self) -> str:
        finished = f"{self.finished} · " if self.finished else ""
        return f"SF {finished}{'paused · ' if self.paused else ''}{self.labels}"

    @property
    def compact_text(self) -> str:
        """Narrow screens; repair and review keep their full labels."""
        if self.critical:
            return self.full_text
        letters = "".join(f"[{part.letter}]" for part in self.parts)
        return f"{'P!' if self.paused else ''}{letters}"

    @property
    def terminal_title(self) -> str:
        labels = "|".join(part.value for part in self.parts)
        return f"SF[{'paused|' if self.paused else ''}{labels}]"


def badge(axes: Axes, *, paused: bool = False, finished: str = "") -> Badge:
    """``finished``: the status of a session whose work ended; nothing pulses then."""
    values = axes.as_dict()
    parts = tuple(
        BadgePart(
            axis=axis,
            value=values[axis],
            letter=LETTERS[axis].get(values[axis], values[axis]),
            colour=COLOURS[axis][values[axis]],
            pulsing=axis == "run_control"
            and values[axis] == "autonomous"
            and not paused
            and not finished,
        )
        for axis in SHOWN_AXES
    )
    return Badge(
        parts=parts,
        paused=paused,
        critical=values["work_mode"] in CRITICAL_WORK_MODES,
        finished=finished,
    )


def badge_for(session: object) -> Badge:
    """The badge of anything with ``axes`` and ``paused`` (an ``AgentSession``); a
    session that is no longer active (completed, failed, stopped) does not pulse."""
    status = getattr(session, "status", "active")
    finished = "" if status == "active" else str(status)
    return badge(session.axes, paused=session.paused, finished=finished)  # type: ignore[attr-defined]
