"""The two stages of a session's recorded trace: planning, then the units.

A trace made for the web's intent box starts with the planner's answer: a
``model_step`` marked ``"stage": "plan"`` whose content is the plan's JSON. The units
answer from the other model steps. A trace without a planning step (the demo's, made
for ``sf headless --replay``) plans from its header's ``plan_yaml``, as headless does.
Either way nothing but the trace answers: replay never calls a live model.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import yaml

from agents_app.axes import PermissionProfile
from agents_app.runtime.replay import Replay, TraceFileInvalid, replay_load

PLAN_STAGE = "plan"
# A model review's steps and calls (``tasks_app.features.model_review``), after its unit's.
REVIEW_STAGE = "review"


def planning_replay(path: str | Path) -> Replay:
    """The planner's answers of the trace at ``path``."""
    replay = replay_load(path)
    steps = [step for step in replay.model_steps if step.get("stage") == PLAN_STAGE]
    if not steps:
        plan_yaml = replay.header.get("plan_yaml")
        if not isinstance(plan_yaml, str):
            raise TraceFileInvalid(
                f'{path}: no planning step (a model_step with "stage": "plan") '
                "and no plan_yaml in the header"
            )
        content = json.dumps(yaml.safe_load(plan_yaml))
        steps = [{"type": "model_step", "stage": PLAN_STAGE, "content": content}]
    return replace(replay, model_steps=steps, tool_calls=[], step_units=(), call_units=())


def unit_replay(path: str | Path) -> Replay:
    """The units' answers of the trace at ``path`` (its planning steps and model
    reviews left out)."""
    replay = replay_load(path)
    own = (PLAN_STAGE, REVIEW_STAGE)
    steps = [i for i, step in enumerate(replay.model_steps) if step.get("stage") not in own]
    calls = [i for i, call in enumerate(replay.tool_calls) if call.get("stage") != REVIEW_STAGE]
    return replace(
        replay,
        model_steps=[replay.model_steps[i] for i in steps],
        tool_calls=[replay.tool_calls[i] for i in calls],
        # Which unit each is of, kept beside them (``Replay.units_split``).
        step_units=tuple(replay.step_units[i] for i in steps) if replay.step_units else (),
        call_units=tuple(replay.call_units[i] for i in calls) if replay.call_units else (),
    )


def review_replay(source: Replay) -> Replay | None:
    """A fresh cursor over the model review's answers and calls in ``source`` (None:
    it recorded no review; replay never calls a live model)."""
    steps = [step for step in source.model_steps if step.get("stage") == REVIEW_STAGE]
    if not steps:
        return None
    calls = [call for call in source.tool_calls if call.get("stage") == REVIEW_STAGE]
    return Replay(header=source.header, model_steps=steps, tool_calls=calls)


def recorded_header(path: str | Path) -> dict[str, object]:
    """The header of the trace at ``path`` ({} without a trace, or an unreadable one)."""
    if not path:
        return {}
    try:
        return dict(replay_load(path).header)
    except TraceFileInvalid:
        return {}


def recorded_profile(header: dict[str, object]) -> str:
    """The permission profile a trace was recorded under ("" if it names none): what
    the plan page proposes, since its tool calls were judged under it."""
    profile = header.get("permission_profile")
    return profile if isinstance(profile, str) and profile in PermissionProfile.values else ""


def recorded_model(header: dict[str, object]) -> str:
    """The model a recorded trace came from ("" for a hand-written one, which names none)."""
    return str(header.get("model") or "")
