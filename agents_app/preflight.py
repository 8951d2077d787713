"""Pre-flight: what a page says *before* the click when no model is configured.

Planning asks the deep model, units the session's model mode (after **Run
autonomously**: smart). A session with a recorded trace needs no model: its model
calls answer from the trace. Where no model is configured the pages offer the traces
of ``SF_REPLAY_TRACES`` instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

from agents_app.axes import ModelMode
from agents_app.runtime.llm import ModelNotConfigured, model_for
from agents_app.runtime.replay import TraceFileInvalid, replay_load
from sf_core.errors import SfError

PLANNING_MODE = ModelMode.DEEP  # plan_from_intent asks the deep model


class TraceUnknown(SfError):
    """A replay trace that is not one of those offered."""


@dataclass(frozen=True)
class Preflight:
    """What a page shows before the click: the problem (once), and the replays on offer."""

    problem: str  # empty when the model is configured or a trace answers
    replays: tuple[str, ...]  # trace names the person may choose instead

    @property
    def blocked(self) -> bool:
        return bool(self.problem) and not self.replays


def model_problem(model_mode: str, *, replay_trace: str = "") -> str:
    """Why a model call in ``model_mode`` would fail now, or "" (a trace answers)."""
    if replay_trace:
        return ""
    try:
        model_for(model_mode)
    except ModelNotConfigured as exc:
        return str(exc)
    return ""


def preflight(model_mode: str, *, replay_trace: str = "") -> Preflight:
    return preflight_of(model_problem(model_mode, replay_trace=replay_trace))


def preflight_of(problem: str) -> Preflight:
    """The pre-flight for ``problem``: the traces on offer only when there is one."""
    return Preflight(problem=problem, replays=tuple(replay_traces()) if problem else ())


def replay_traces() -> dict[str, Path]:
    """The replayable traces on offer, by file name (a broken file is left out)."""
    folder = Path(settings.SF_REPLAY_TRACES)
    found: dict[str, Path] = {}
    for path in sorted(folder.glob("*.jsonl")) if folder.is_dir() else []:
        try:
            replay_load(path)
        except TraceFileInvalid:
            continue
        found[path.name] = path
    return found


def replay_trace_path(name: str) -> Path:
    """The path of the offered trace called ``name``; anything else is refused."""
    traces = replay_traces()
    if name not in traces:
        offered = ", ".join(traces) or "none (put *.jsonl traces in SF_REPLAY_TRACES)"
        raise TraceUnknown(f"unknown replay trace {name!r}; offered: {offered}")
    return traces[name]
