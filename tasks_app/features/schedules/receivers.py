"""Where schedules listen: each worker's sweep (``sweep_due``, every ``SF_SWEEP_INTERVAL``)
runs them; no beat process to deploy."""

from __future__ import annotations

from typing import Any

from sf_core.signals import sweep_due
from tasks_app.features.schedules.runner import schedules_sweep


def on_sweep_due(sender: object, **_: Any) -> dict[str, int]:
    return schedules_sweep()


def connect() -> None:
    sweep_due.connect(on_sweep_due, dispatch_uid="tasks_app.features.schedules.sweep")
