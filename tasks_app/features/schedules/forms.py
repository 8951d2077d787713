"""The schedule form's values as text: from a request, for a new schedule, from a saved
one. Validation is ``ScheduleSpec``'s (the same for the CLI and the API)."""

from __future__ import annotations

from django.http import QueryDict

from agents_app.axes import NEW_SESSION_AXES
from tasks_app.features.schedules.timing import duration_text
from tasks_app.models import Schedule
from tasks_app.models.schedules import DEFAULT_CATCH_UP

FIELDS = (
    "name",
    "kind",
    "intent",
    "plan_text",
    "plan_format",
    "cron",
    "timezone",
    "run_control",
    "permission_profile",
    "model_mode",
    "catch_up_window",
    "run_as",
)


def form_initial() -> dict[str, str]:
    """A new schedule: the new-session axes (``NEW_SESSION_AXES``), UTC, one hour."""
    initial: dict[str, str] = {
        "kind": "intent",
        "plan_format": "yaml",
        "timezone": "UTC",
        "catch_up_window": duration_text(DEFAULT_CATCH_UP),
    }
    for axis in ("run_control", "permission_profile", "model_mode"):
        initial[axis] = NEW_SESSION_AXES[axis]
    return initial


def form_data(post: QueryDict) -> dict[str, str]:
    """What was posted, every field as text (absent ones left to the spec's defaults)."""
    return {field: post.get(field, "") for field in FIELDS if field in post}


def form_of(schedule: Schedule) -> dict[str, str]:
    return {
        "name": schedule.name,
        "kind": schedule.kind,
        "intent": schedule.intent,
        "plan_text": schedule.plan_text,
        "plan_format": schedule.plan_format,
        "cron": schedule.cron,
        "timezone": schedule.timezone,
        "run_control": schedule.run_control,
        "permission_profile": schedule.permission_profile,
        "model_mode": schedule.model_mode,
        "catch_up_window": duration_text(schedule.catch_up_window),
        "run_as": schedule.run_as.get_username() if schedule.run_as else "",
    }
