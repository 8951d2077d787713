"""pydantic schemas of the agents app: the project policy document."""

from __future__ import annotations

from decimal import Decimal
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from sf_core.env import http_url_problem
from sf_core.errors import PolicyInvalid


class RepairPolicy(StrEnum):
    """What happens when SF would move an autonomous session to repair."""

    AUTO = "auto"  # transition at once (still logged)
    ASK = "ask"  # a pending transition a person must approve
    LOG_ONLY = "log-only"  # only record that it would have happened


class PolicyRule(BaseModel):
    """An allow or deny rule: a tool (or ``*``) and a glob on the command or path."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tool: str = Field(default="*", min_length=1, max_length=64)
    pattern: str = Field(min_length=1, max_length=500)
    reason: str | None = Field(default=None, max_length=500)


class Budgets(BaseModel):
    model_config = ConfigDict(extra="forbid")

    session_cost_usd: Decimal | None = Field(default=None, ge=0)
    task_cost_usd: Decimal | None = Field(default=None, ge=0)
    max_autonomous_continues: int = Field(default=50, ge=0, le=10_000)


class ToolCalls(StrEnum):
    """How a model's tool calls reach the agent loop.

    ``native``: structured ``tool_calls`` only. ``text``: tools are offered as usual and
    native calls are taken, and a single well-formed call written as JSON in the answer
    (a fenced ```json block or a bare ``{"name": …, "arguments": {…}}``) is recognised
    too — what small local models do with ``tool_choice`` auto. ``json_schema``: the
    answer is constrained by ``response_format`` to "one of the tools with its
    arguments" (for servers that enforce a JSON schema but not tool calls).

    ``auto`` is ``native`` for a model litellm knows to call tools natively, else
    ``text``: text still accepts native calls, so a capable model loses nothing, while
    a model litellm does not know (a local one) gets its calls recognised instead of
    failing as "no progress"; a known model keeps ``native`` so that JSON quoted in its
    prose is never taken for a call. ``json_schema`` is never chosen by itself: many
    servers ignore or refuse ``response_format``.
    """

    AUTO = "auto"
    NATIVE = "native"
    TEXT = "text"
    JSON_SCHEMA = "json_schema"


class ModelOverride(BaseModel):
    """A project's model settings for one model mode; unset fields keep the environment's.

    The key is named by the variable that holds it: a policy is shown and exported, a
    key must not be stored in it."""

    model_config = ConfigDict(extra="forbid")

    model: str | None = Field(default=None, min_length=1, max_length=200)
    api_base: str | None = Field(default=None, max_length=500)
    api_key_env: str | None = Field(default=None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    tool_calls: ToolCalls | None = None
    context_window: int | None = Field(default=None, ge=512, le=100_000_000)

    @field_validator("api_base")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        problem = http_url_problem(value)
        if problem:
            raise ValueError(f"expected {problem}")
        return value.rstrip("/")


class ModelModeName(StrEnum):
    FAST = "fast"
    SMART = "smart"
    DEEP = "deep"
    FALLBACK = "fallback"


class SkillAutoCreate(StrEnum):
    """What SF does with a skill it proposes from repeated evidence."""

    PROPOSE = "propose"  # store the proposal; a person accepts or rejects it
    WRITE = "write"  # also write it at once, as a task (gate, verify, review, merge)


class SkillsPolicy(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # Manual or restricted sessions only ever propose, whatever this says.
    auto_create: SkillAutoCreate = SkillAutoCreate.PROPOSE


class ProjectPolicy(BaseModel):
    """The policy JSON stored on a project."""

    model_config = ConfigDict(extra="forbid")

    allow: list[PolicyRule] = Field(default_factory=list)
    deny: list[PolicyRule] = Field(default_factory=list)
    repair_policy: RepairPolicy = RepairPolicy.ASK
    budgets: Budgets = Field(default_factory=Budgets)
    default_verify: list[str] = Field(default_factory=list)
    # The project's own check, run on every merged tree in the merge queue after the
    # task's verify commands (tasks_app.engine.merge_queue); empty: none.
    check_command: str = ""
    models: dict[ModelModeName, ModelOverride] = Field(default_factory=dict)
    # Hosts agent and verify commands may reach. The OS sandbox (bubblewrap) can only
    # switch the network on or off: any entry switches it on for every host.
    egress: list[str] = Field(default_factory=list)
    skills: SkillsPolicy = Field(default_factory=SkillsPolicy)

    @field_validator("default_verify")
    @classmethod
    def _commands_not_blank(cls, commands: list[str]) -> list[str]:
        if any(not command.strip() for command in commands):
            raise ValueError("verify commands must not be blank")
        return commands

    @field_validator("egress")
    @classmethod
    def _hosts_not_blank(cls, hosts: list[str]) -> list[str]:
        if any(not host.strip() for host in hosts):
            raise ValueError("egress hosts must not be blank")
        return hosts


def policy_parse(data: object) -> ProjectPolicy:
    """Validate a policy document; errors name every bad field in one line."""
    try:
        if isinstance(data, str | bytes):
            return ProjectPolicy.model_validate_json(data)
        return ProjectPolicy.model_validate(data or {})
    except ValidationError as exc:
        raise PolicyInvalid("invalid project policy: " + validation_summary(exc)) from None


def validation_summary(exc: ValidationError) -> str:
    """``field.path: message; other.field: message`` for a one-line error."""
    parts = []
    for error in exc.errors():
        location = ".".join(str(part) for part in error["loc"]) or "(document)"
        parts.append(f"{location}: {error['msg']}")
    return "; ".join(parts)
