"""Schedules for tests: a plan template and a spec with sensible defaults."""

from __future__ import annotations

from typing import Any

from tasks_app.features.schedules.spec import ScheduleSpec

PLAN_TEMPLATE = """summary: bump the dependencies
tasks:
  - key: bump
    title: Bump the pinned dependencies
    acceptance_criteria: [the lock file names the newest versions]
    verify: ["true"]
"""


def plan_spec(**changes: Any) -> ScheduleSpec:
    """A nightly plan template, 02:30 Berlin time, manual run control."""
    data: dict[str, Any] = {
        "name": "nightly bump",
        "kind": "plan",
        "plan_text": PLAN_TEMPLATE,
        "cron": "30 2 * * *",
        "timezone": "Europe/Berlin",
        **changes,
    }
    return ScheduleSpec.model_validate(data)


def intent_spec(**changes: Any) -> ScheduleSpec:
    data: dict[str, Any] = {
        "name": "weekly flaky hunt",
        "kind": "intent",
        "intent": "find and fix one flaky test",
        "cron": "0 9 * * MON",
        "timezone": "UTC",
        **changes,
    }
    return ScheduleSpec.model_validate(data)
