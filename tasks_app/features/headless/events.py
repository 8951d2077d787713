"""The events of ``sf headless --output-format stream-json``: one JSON object per
line on stdout, each with a ``type``. ``sf headless --event-schema`` prints their JSON
Schema; docs/headless.md describes them.
"""

from __future__ import annotations

from datetime import datetime
from enum import IntEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter


class ExitCode(IntEnum):
    """The same in every output format."""

    SUCCESS = 0
    ERROR = 1  # an error, a failed task, or --timeout
    USAGE = 2  # bad flags or inputs; nothing was written
    BLOCKED = 10  # needs a person: plan acceptance, an approval, ask_user, a pause
    CANCELLED = 11  # SIGINT or SIGTERM; the state is kept, --session resumes
    RELOAD = 12  # the engine asks to be restarted with resume (--session)


class _Event(BaseModel):
    model_config = ConfigDict(extra="forbid")

    at: datetime = Field(description="when it happened (UTC)")


class Axes(BaseModel):
    work_mode: str
    run_control: str
    permission_profile: str
    model_mode: str
    surface: str


class SessionEvent(_Event):
    """The session headless drives: first, and again when it resumes after a pause."""

    type: Literal["session"] = "session"
    session: int
    project: str
    repo_path: str
    axes: Axes
    paused: bool
    badge: str = Field(description="the mode badge's text, e.g. 'SF build | autonomous | …'")
    resumed: bool = Field(description="true when --session picked up an existing session")


class TransitionEvent(_Event):
    """A change of the session's axes or pause flag (a ModeTransition)."""

    type: Literal["transition"] = "transition"
    session: int
    id: int
    from_axes: Axes
    to_axes: Axes
    paused: bool
    reason: str
    scope: str
    status: str = Field(description="applied, pending or cancelled")
    actor: str


class PlanEvent(_Event):
    """A plan proposed, accepted, rejected or completed."""

    type: Literal["plan"] = "plan"
    session: int
    id: int
    status: str
    summary: str
    tasks: int
    reason: str = ""


class TaskEvent(_Event):
    """A task moved in its lifecycle (a TaskTransition)."""

    type: Literal["task"] = "task"
    session: int
    task: str = Field(description="the task's key")
    title: str
    from_status: str
    to_status: str
    reason: str
    actor: str


class UnitEvent(_Event):
    """A unit (one attempt at a task) started or ended."""

    type: Literal["unit"] = "unit"
    session: int
    task: str
    unit: int
    attempt: int
    status: str = Field(description="running, then done, failed, blocked, cancelled, …")
    model: str
    cost_usd: str
    summary: str = ""


class ToolCallEvent(_Event):
    """A tool call of a unit's agent, after the permission gate let it run."""

    type: Literal["tool_call"] = "tool_call"
    session: int
    unit: int | None
    tool: str
    input_hash: str
    ok: bool = Field(description="false when the tool reported an error")


class DecisionEvent(_Event):
    """A permission-gate decision worth a person's attention (deny or ask), or a
    review of one."""

    type: Literal["decision"] = "decision"
    session: int
    id: int
    tool: str
    decision: str = Field(description="allow, deny or ask")
    rule: str
    reason: str
    review_status: str = Field(description="not_needed, pending, approved or rejected")


class HeartbeatEvent(_Event):
    """Emitted every SF_HEADLESS_HEARTBEAT (60 s by default) while headless runs."""

    type: Literal["heartbeat"] = "heartbeat"
    session: int
    elapsed_s: float
    activity: str = Field(description="idle, unit or tool")
    tasks: dict[str, int] = Field(description="tasks by status")


class RestartEvent(_Event):
    """The supervisor (--max-restarts) restarts a crashed or reloading run."""

    type: Literal["restart"] = "restart"
    restart: int = Field(description="1 for the first restart")
    of: int = Field(description="--max-restarts")
    after_s: float = Field(description="the backoff waited before restarting")
    reason: str


class TaskOutcome(BaseModel):
    key: str
    title: str
    status: str
    reason: str


class ResultEvent(_Event):
    """The last line: the outcome, and the exit code the process exits with. It is
    also the one object ``--output-format json`` prints."""

    type: Literal["result"] = "result"
    ok: bool
    exit_code: int
    status: Literal["success", "error", "timeout", "blocked", "cancelled", "reload", "usage"]
    reason: str
    session: int | None = None
    plan: int | None = None
    units: int = Field(default=0, description="units this process ran or watched")
    cost_usd: str = "0"
    duration_s: float = 0.0
    tasks: list[TaskOutcome] = Field(default_factory=list)
    waiting_for: list[str] = Field(
        default_factory=list, description="what a person must do (exit code 10)"
    )
    resume: str = Field(default="", description="the command that resumes this session")


Event = Annotated[
    SessionEvent
    | TransitionEvent
    | PlanEvent
    | TaskEvent
    | UnitEvent
    | ToolCallEvent
    | DecisionEvent
    | HeartbeatEvent
    | RestartEvent
    | ResultEvent,
    Field(discriminator="type"),
]
EVENT_ADAPTER: TypeAdapter[Any] = TypeAdapter(Event)


def event_parse(line: str) -> _Event:
    """Validate one stream-json line against the schemas (tests and consumers)."""
    event: _Event = EVENT_ADAPTER.validate_json(line)
    return event


def event_schema() -> dict[str, Any]:
    schema: dict[str, Any] = EVENT_ADAPTER.json_schema()
    return schema
