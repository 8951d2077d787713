"""pydantic schemas of the agents app: the project policy document."""

from __future__ import annotations

from decimal import Decimal
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from agents_app.mcp_schemas import McpPolicy
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
    # Reserved against the session's (and the task's) remaining budget before a unit
    # starts, so that parallel units cannot overshoot it together; a unit that spends
    # its reservation reserves another as long as the budget has some unreserved.
    unit_reserve_usd: Decimal = Field(default=Decimal("0.50"), ge=0)


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


class ModelPrice(BaseModel):
    """What a model litellm cannot price (a self-hosted one) costs the project, in USD per
    token; litellm's own price wins for the models it knows."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    input_per_token: Decimal = Field(ge=0, le=1)
    output_per_token: Decimal = Field(ge=0, le=1)

    def cost(self, tokens_in: int, tokens_out: int) -> Decimal:
        return self.input_per_token * tokens_in + self.output_per_token * tokens_out


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


class ForgeKind(StrEnum):
    GITHUB = "github"
    GITLAB = "gitlab"


class ForgePolicy(BaseModel):
    """Optional: a task waiting for a person's review is pushed to ``remote`` and opened
    as a pull request on the forge; a review there comes back to SF (tasks_app/features/forge.py).
    The token is named by the variable that holds it, never stored in the policy."""

    model_config = ConfigDict(extra="forbid")

    kind: ForgeKind
    api_url: str = Field(min_length=1, max_length=500)  # https://api.github.com, …/api/v4
    repository: str = Field(min_length=1, max_length=300)  # owner/name, or GitLab's path
    remote: str = Field(default="origin", min_length=1, max_length=200)
    token_env: str = Field(default="SF_FORGE_TOKEN", pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")

    @field_validator("api_url")
    @classmethod
    def _http(cls, url: str) -> str:
        if not url.startswith(("https://", "http://")):
            raise ValueError("api_url must be an http(s) URL")
        return url.rstrip("/")


SECRET_NAME = r"^[A-Z][A-Z0-9_]{0,63}$"


class WorktreeFile(BaseModel):
    """A file written into every worktree from a secret (never committed, never shown)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    path: str = Field(min_length=1, max_length=300)
    secret: str = Field(pattern=SECRET_NAME)

    @field_validator("path")
    @classmethod
    def _inside(cls, path: str) -> str:
        parts = path.split("/")
        if path.startswith("/") or ".." in parts or ".git" in parts or "\x00" in path:
            raise ValueError("a relative path inside the worktree (no .., no .git)")
        return path


class WorktreeResource(StrEnum):
    """A per-unit resource passed to commands as an environment variable."""

    PORT = "port"  # SF_PORT: a TCP port that was free when the unit started
    DATABASE = "database"  # SF_DATABASE_NAME: a scratch database name (not created)


class WorktreeEnv(BaseModel):
    """How a worktree is made ready: files from secrets, a setup command run once per
    worktree (through the gate and the sandbox), per-unit resources
    (docs/worktree-environment.md)."""

    model_config = ConfigDict(extra="forbid")

    setup: str | None = Field(default=None, min_length=1, max_length=4000)
    files: list[WorktreeFile] = Field(default_factory=list)
    resources: list[WorktreeResource] = Field(default_factory=list)
    setup_timeout_s: int = Field(default=900, ge=1, le=3600)


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
    forge: ForgePolicy | None = None

    worktree: WorktreeEnv = Field(default_factory=WorktreeEnv)
    # Prices of models litellm has no price for, by litellm model name.
    prices: dict[str, ModelPrice] = Field(default_factory=dict)
    # MCP servers started for every unit, and the risk classes of MCP tools (docs/agent-mcp.md).
    mcp: McpPolicy = Field(default_factory=McpPolicy)

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
