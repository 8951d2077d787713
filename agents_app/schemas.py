"""pydantic schemas of the agents app: the project policy document."""

from __future__ import annotations

import ipaddress
import re
from decimal import Decimal
from enum import StrEnum
from typing import Literal
from urllib.parse import urlsplit

from django.conf import settings
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from agents_app.forge_schemas import (  # noqa: F401  (the policy and its callers name them)
    FORGE_PUBLIC_API,
    ForgeIssuesPolicy,
    ForgeKind,
    ForgePolicy,
    forge_api_problem,
    forge_token_problem,
)
from agents_app.hook_schemas import Hook, hooks_problem
from agents_app.mcp_schemas import McpPolicy
from sf_core.env import http_url_problem
from sf_core.errors import PolicyInvalid
from sf_core.netguard import host_normal, literal_problem


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


class PromptProfile(StrEnum):
    """What a model is offered: ``full`` (every tool, the full system prompt) or
    ``compact`` (the tools a small model uses well, schemas without descriptions of
    defaults, a shorter system prompt: on a local model the prompt is the cost).
    ``auto`` is compact for a model with a small context window."""

    AUTO = "auto"
    FULL = "full"
    COMPACT = "compact"


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
    max_tokens: int | None = Field(default=None, ge=64, le=1_000_000)
    temperature: float | None = Field(default=None, ge=0, le=2)
    top_p: float | None = Field(default=None, ge=0, le=1)
    prompt_profile: PromptProfile | None = None

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


class AttemptVariant(BaseModel):
    """What one best-of-N attempt does differently: a model mode, a model (litellm
    name, on that mode's endpoint) or a temperature; unset fields keep the session's."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model_mode: Literal["fast", "smart", "deep"] | None = None
    model: str | None = Field(default=None, min_length=1, max_length=200)
    temperature: float | None = Field(default=None, ge=0, le=2)


# Best-of-N attempts without configured variants: the session's model at these
# temperatures, in order (the first is the likeliest answer, as a single unit's).
DEFAULT_ATTEMPT_TEMPERATURES = (0.0, 0.4, 0.8, 1.0, 0.2, 0.6, 0.9, 1.2)


class BestOfPolicy(BaseModel):
    """Best-of-N (docs/best-of-n.md): the most attempts a task may run at once, and the
    variants attempt 1, 2, … use (cycled when N is larger)."""

    model_config = ConfigDict(extra="forbid")

    cap: int = Field(default=4, ge=1, le=8)
    variants: list[AttemptVariant] = Field(default_factory=list, max_length=8)

    def variant(self, index: int) -> AttemptVariant:
        """The variant of attempt ``index`` (0-based) of a round."""
        if self.variants:
            return self.variants[index % len(self.variants)]
        temperatures = DEFAULT_ATTEMPT_TEMPERATURES
        return AttemptVariant(temperature=temperatures[index % len(temperatures)])


class SkillAutoCreate(StrEnum):
    """What SF does with a skill it proposes from repeated evidence."""

    PROPOSE = "propose"  # store the proposal; a person accepts or rejects it
    WRITE = "write"  # also write it at once, as a task (gate, verify, review, merge)


class SkillsPolicy(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # Manual or restricted sessions only ever propose, whatever this says.
    auto_create: SkillAutoCreate = SkillAutoCreate.PROPOSE


class ModelReviewMode(StrEnum):
    """What a model's review of verified work does before a person's (docs/model-review.md)."""

    OFF = "off"  # no model review
    ADVISORY = "advisory"  # its verdict and comments are shown; a person decides
    REQUIRED = "required"  # its request_changes sends the task back, like a person's


class ModelReviewPolicy(BaseModel):
    model_config = ConfigDict(extra="forbid")

    mode: ModelReviewMode = ModelReviewMode.OFF
    # Required: after this many rounds sent back on one task, its verdict is advisory
    # (a person decides), so a reviewer that never approves cannot loop a task forever.
    max_rounds: int = Field(default=2, ge=1, le=20)
    max_steps: int = Field(default=12, ge=1, le=100)  # model steps of one review
    timeout_s: int = Field(default=900, ge=10, le=7200)  # one review's time, then no verdict


class RecordPolicy(BaseModel):
    """Optional: the project's repository of record is a git remote (``url``), and each
    worker host works in a mirror of its own (``tasks_app/engine/record.py``,
    docs/deploy.md). Absent: single-host mode, the registered ``repo_path`` itself."""

    model_config = ConfigDict(extra="forbid")

    url: str = Field(min_length=1, max_length=500)

    @field_validator("url")
    @classmethod
    def _listed(cls, url: str) -> str:
        problem = record_url_problem(url)
        if problem:
            raise ValueError(problem)
        return url


SCP_LIKE = re.compile(r"^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:[^\s]+$")  # git@host:path


def record_url_problem(url: str) -> str:
    """Why ``url`` may not be a repository of record ('' when it may): an ssh, https or
    file URL (or ``user@host:path``) without a password in it, starting with one of the
    prefixes the server's ``SF_RECORD_URL_PREFIXES`` lists."""
    if url != url.strip() or any(c.isspace() for c in url) or url.startswith("-"):
        return f"record url {url!r} has spaces or starts with '-'"
    parts = urlsplit(url)
    if parts.scheme not in ("ssh", "https", "file") and not SCP_LIKE.match(url):
        return f"record url {url} is not an ssh://, https:// or file:// URL nor user@host:path"
    if parts.scheme in ("ssh", "https") and parts.password is not None:
        return "record url carries a password: give the worker hosts a key or credential helper"
    prefixes = settings.SF_RECORD_URL_PREFIXES
    if not any(url.startswith(prefix) for prefix in prefixes):
        listed = ", ".join(prefixes) or "none"
        return f"record url {url} is under no prefix SF_RECORD_URL_PREFIXES lists ({listed})"
    if "/../" in f"{parts.path}/" or parts.path.endswith("/.."):
        return f"record url {url} climbs out of its prefix with '..'"
    return ""


def record_forge_problem(url: str, repository: str) -> str:
    """Why a record at ``url`` cannot go with a forge's ``repository`` ('' when it can).
    With both, pull requests are opened for the branches SF pushes to the record, so
    the record must be the forge's own repository: its path ends with ``repository``
    (``owner/name``, or GitLab's ``group/sub/name``), with or without ``.git``."""
    path = url.partition(":")[2] if SCP_LIKE.match(url) else urlsplit(url).path
    path = path.rstrip("/").removesuffix(".git")
    wanted = repository.strip("/").removesuffix(".git")
    if path == wanted or path.endswith(f"/{wanted}"):
        return ""
    return (
        f"record url {url} is not the forge's repository {wanted}: with a forge, the "
        "repository of record must be the forge's own (pull requests are opened for the "
        f"branches SF pushes to the record), a URL whose path ends with {wanted}.git"
    )


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


class SandboxLimits(BaseModel):
    """Resource limits of every sandboxed command of a project (docs/security.md)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    processes: int = Field(default=512, ge=8, le=65536)  # processes and threads
    memory_mb: int = Field(default=8192, ge=64, le=1048576)  # address space per process
    file_size_mb: int = Field(default=4096, ge=1, le=1048576)  # the largest file written
    open_files: int = Field(default=4096, ge=32, le=1048576)  # per process
    cpu_s: int = Field(default=3600, ge=1, le=86400)  # CPU time per process
    tmp_mb: int = Field(default=1024, ge=1, le=65536)  # /tmp, and /dev/shm (a quarter)


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
    # Hosts agent and verify commands may reach, through SF's egress proxy only
    # (agents_app/runtime/egress.py): pypi.org, *.pythonhosted.org, or * (every public
    # host; a server admin's grant). Loopback and private addresses never.
    egress: list[str] = Field(default_factory=list)
    # Resource limits of sandboxed commands (processes, memory, files, CPU, /tmp).
    sandbox: SandboxLimits = Field(default_factory=SandboxLimits)
    skills: SkillsPolicy = Field(default_factory=SkillsPolicy)
    forge: ForgePolicy | None = None
    # The repository of record on a git remote: worker hosts without a shared disk.
    record: RecordPolicy | None = None

    worktree: WorktreeEnv = Field(default_factory=WorktreeEnv)
    # Prices of models litellm has no price for, by litellm model name.
    prices: dict[str, ModelPrice] = Field(default_factory=dict)
    # MCP servers started for every unit, and the risk classes of MCP tools (docs/agent-mcp.md).
    mcp: McpPolicy = Field(default_factory=McpPolicy)
    # A model's review of verified work before a person's (docs/model-review.md).
    model_review: ModelReviewPolicy = Field(default_factory=ModelReviewPolicy)
    best_of: BestOfPolicy = Field(default_factory=BestOfPolicy)
    # Commands run around a unit's work, each at its trigger (docs/hooks.md).
    hooks: list[Hook] = Field(default_factory=list)

    @model_validator(mode="after")
    def _record_is_the_forges(self) -> ProjectPolicy:
        if self.record is not None and self.forge is not None:
            problem = record_forge_problem(self.record.url, self.forge.repository)
            if problem:
                raise ValueError(problem)
        return self

    @field_validator("hooks")
    @classmethod
    def _hooks(cls, hooks: list[Hook]) -> list[Hook]:
        problem = hooks_problem(hooks)
        if problem:
            raise ValueError(problem)
        return hooks

    @field_validator("default_verify")
    @classmethod
    def _commands_not_blank(cls, commands: list[str]) -> list[str]:
        if any(not command.strip() for command in commands):
            raise ValueError("verify commands must not be blank")
        return commands

    @field_validator("egress")
    @classmethod
    def _hosts(cls, hosts: list[str]) -> list[str]:
        checked = []
        for entry in hosts:
            problem = egress_host_problem(entry)
            if problem:
                raise ValueError(problem)
            host, port = egress_entry(entry)
            checked.append(host if port is None else f"{_bracketed(host)}:{port}")
        return checked


LABEL = r"[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9])?"
EGRESS_NAME = re.compile(rf"^(\*\.)?({LABEL}\.)*{LABEL}$")


def egress_entry(entry: str) -> tuple[str, int | None]:
    """An egress entry's host (normalised) and its port (None: the default ports,
    443 over CONNECT and 80 for plain HTTP): ``pypi.org``, ``example.com:8443``,
    ``[2001:db8::1]:8443``; a port that is not a number from 1 to 65535 is 0."""
    text = entry.strip()
    if text.startswith("[") and "]:" in text:
        host, _, port = text[1:].partition("]:")
    elif text.count(":") == 1:
        host, _, port = text.partition(":")
    else:
        return host_normal(text), None
    number = int(port) if port.isascii() and port.isdigit() else 0
    return host_normal(host), number if 0 < number < 65536 else 0


def _bracketed(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def egress_host_problem(entry: str) -> str:
    """Why ``entry`` is not an egress entry ('' when it is): a domain (``pypi.org``), its
    subdomains (``*.pythonhosted.org``), ``*`` for every public host, or a public
    address, each optionally with a port beyond the default ones (``host:8443``); never
    a URL, a path, or a loopback/private address."""
    name, port = egress_entry(entry)
    if not name:
        return "egress hosts must not be blank"
    if port == 0 and entry.rsplit(":", 1)[-1].strip().isdigit():
        return (
            f"egress entry {entry!r} has a port that is not a number from 1 to 65535: "
            "write host:port (example.com:8443)"
        )
    if name == "*" and port != 0:
        return ""
    literal = literal_problem(name)
    if literal:
        return f"egress host {entry!r} is {literal}: SF never lets a command reach it"
    if port == 0 or (not EGRESS_NAME.match(name) and not _is_address(name)):
        return (
            f"egress host {entry!r} is not a host name: write pypi.org, *.pythonhosted.org "
            "or * (every public host), optionally with a port (example.com:8443), "
            "without scheme or path"
        )
    return ""


def _is_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


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
