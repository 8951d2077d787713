"""What a schedule is made of, checked the same way for the page, the CLI and the API.

``ScheduleSpec`` is the pydantic model of the input; each problem names its field
(``cron: '61 2 * * *': bad minute field; …``). ``spec_errors`` turns a validation error
into one message per field for a form.
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from agents_app.axes import NEW_SESSION_AXES, ModelMode, PermissionProfile, RunControl
from sf_core.errors import PlanInvalid
from tasks_app.features.schedules.timing import (
    MIN_CATCH_UP,
    ScheduleInvalid,
    cron_parse,
    duration_text,
    zone_parse,
)
from tasks_app.intake import plan_upload_read
from tasks_app.models import ScheduleKind
from tasks_app.models.schedules import DEFAULT_CATCH_UP

PLAN_FORMATS = ("yaml", "json", "md")
MAX_CATCH_UP = timedelta(days=7)
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|m|h|d)?\s*$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
DURATION_HELP = "a duration such as 90s, 30m, 6h or 1d"


def duration_parse(text: str) -> timedelta:
    """``30m``, ``6h``, ``1d`` or a number of seconds, as SF's durations are written."""
    match = _DURATION.match(text)
    if match is None:
        raise ScheduleInvalid("catch_up_window", f"{text!r} is not {DURATION_HELP}")
    return timedelta(seconds=float(match.group(1)) * _UNITS[match.group(2) or "s"])


class ScheduleSpec(BaseModel):
    """A schedule as a person states it. ``run_as``: the username its runs act as
    (empty: the person who saves it)."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    name: str = Field(min_length=1, max_length=120)
    kind: ScheduleKind = ScheduleKind.INTENT
    intent: str = ""
    plan_text: str = ""
    plan_format: Literal["yaml", "json", "md"] = "yaml"
    cron: str = Field(description="five fields, wall-clock time in `timezone`")
    timezone: str = Field(description="IANA time zone, e.g. Europe/Berlin")
    run_control: RunControl = RunControl(NEW_SESSION_AXES["run_control"])
    permission_profile: PermissionProfile = PermissionProfile(
        NEW_SESSION_AXES["permission_profile"]
    )
    model_mode: ModelMode = ModelMode(NEW_SESSION_AXES["model_mode"])
    catch_up_window: timedelta = DEFAULT_CATCH_UP
    run_as: str = ""

    @field_validator("cron")
    @classmethod
    def _cron(cls, value: str) -> str:
        return cron_parse(value)

    @field_validator("timezone")
    @classmethod
    def _zone(cls, value: str) -> str:
        return zone_parse(value).key

    @field_validator("catch_up_window", mode="before")
    @classmethod
    def _window_text(cls, value: Any) -> Any:
        if isinstance(value, str) and not value.strip().upper().startswith("P"):
            return duration_parse(value)  # "30m", "6h"; ISO 8601 ("PT6H") is pydantic's
        return value

    @field_validator("catch_up_window")
    @classmethod
    def _window(cls, value: timedelta) -> timedelta:
        if not MIN_CATCH_UP <= value <= MAX_CATCH_UP:
            raise ScheduleInvalid(
                "catch_up_window",
                f"{duration_text(value)} is outside 1m to 7d (it must be longer than the "
                "workers' sweep interval, or a run a few seconds late would count as missed)",
            )
        return value

    @model_validator(mode="after")
    def _content(self) -> ScheduleSpec:
        if self.kind == ScheduleKind.INTENT and not self.intent:
            raise ScheduleInvalid("intent", "say what the schedule should plan each time")
        if self.kind == ScheduleKind.PLAN:
            if not self.plan_text:
                raise ScheduleInvalid("plan_text", "paste the plan file (YAML, JSON or Markdown)")
            try:
                plan_upload_read(name=self.plan_name, content=self.plan_text.encode())
            except PlanInvalid as exc:
                raise ScheduleInvalid("plan_text", str(exc)) from None
        return self

    @property
    def plan_name(self) -> str:
        return f"plan.{self.plan_format}"


# The choices, for forms and the CLI.
RUN_CONTROLS = tuple(RunControl.values)
PROFILES = tuple(PermissionProfile.values)
MODEL_MODES = tuple(ModelMode.values)


def spec_errors(exc: ValidationError) -> dict[str, str]:
    """One message per field (``form`` for the form as a whole)."""
    errors: dict[str, str] = {}
    for error in exc.errors():
        cause = (error.get("ctx") or {}).get("error")
        if isinstance(cause, ScheduleInvalid):
            errors.setdefault(cause.field, cause.message)
            continue
        field = str(error["loc"][0]) if error.get("loc") else "form"
        errors.setdefault(field, str(error["msg"]))
    return errors


def spec_parse(data: dict[str, Any]) -> ScheduleSpec:
    """``ScheduleSpec`` from a plain mapping; ``ScheduleInvalid`` naming the first
    problem (the CLI's one line)."""
    try:
        return ScheduleSpec.model_validate(data)
    except ValidationError as exc:
        field, message = next(iter(spec_errors(exc).items()))
        raise ScheduleInvalid(field, message) from None
