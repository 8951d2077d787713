"""``sf record``: a unit that ran against a live model, as a trace that replays it.

The trace's header carries the plan to replay it with — the unit's task alone, as its
plan stated it (its dependencies left out: a replay runs the one task) — the permission
profile the session had, and who made it: the model and when, so that a recording is
never mistaken for a hand-written fixture.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from django.utils import timezone

from agents_app.runtime.recording import trace_export, trace_write
from sf_core.errors import SfError
from tasks_app.models import Task, Unit


def task_plan_yaml(task: Task) -> str:
    """The one-task plan that replays ``task``."""
    spec: dict[str, Any] = {
        "key": task.key,
        "title": task.title,
        "description": task.description,
        "acceptance_criteria": list(task.acceptance_criteria),
        "verify": list(task.verify),
        "risk_level": task.risk_level,
        "mutation_scope": task.mutation_scope,
        "task_kind": task.task_kind,
        "intent_claim": list(task.intent_claim),
        # A replay retries as the recording did: a failed attempt's steps, then the next's.
        "max_retries": task.max_retries,
    }
    plan = {"summary": task.plan.summary or task.title, "tasks": [spec]}
    if task.plan.intent:
        plan["intent"] = task.plan.intent
    return yaml.safe_dump(plan, sort_keys=False, allow_unicode=True)


def unit_record(*, unit_id: int, path: Path) -> Path:
    """Write unit ``unit_id``'s trace to ``path``; refused for a replayed unit (its
    answers are somebody else's recording) and for a unit that made no model step."""
    unit = Unit.objects.select_related("task__plan__session").filter(pk=unit_id).first()
    if unit is None:
        raise SfError(f"no unit {unit_id}")
    if unit.model.startswith("replay/") or not unit.model:
        raise SfError(f"unit {unit_id} did not ask a live model (model: {unit.model or 'none'})")
    session = unit.task.plan.session
    header = {
        "note": (
            f"Recorded from a live run of {unit.model}: unit {unit.pk} (attempt {unit.attempt}) "
            f"of task {unit.task.key}, {timezone.now():%Y-%m-%d}; its unit ended {unit.status}."
        ),
        "model": unit.model,
        "task": unit.task.key,
        "permission_profile": session.permission_profile,
        "plan_yaml": task_plan_yaml(unit.task),
    }
    records = trace_export(unit_id=unit.pk, header=header)
    if not any(record["type"] == "model_step" for record in records):
        raise SfError(f"unit {unit_id} has no model step to record")
    return trace_write(path, records)
