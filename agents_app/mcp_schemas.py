"""MCP servers for agents: how a project's policy and a skill's ``mcp.json`` describe them.

Both use the shape other MCP clients use for a server started as a process (stdio):
``command``, ``args``, ``env``. SF adds, in the project policy only, what the gate and
the sandbox need: each tool's risk class (``tools``), whether the server may use the
network, which host paths it may read (``expose``) and its time limits. A skill's
``mcp.json`` is the common ``{"mcpServers": {...}}`` document and nothing else: what its
tools may do without asking is the project's decision (``mcp.tools``), never the
skill's own claim.

An environment value may name project secrets as ``${NAME}`` (the worker's
``SF_SECRET_<NAME>``, as worktree files do): the policy and a committed ``mcp.json``
never hold a key, and the value is redacted wherever it would be shown.

Servers reached by URL (streamable HTTP) are refused with a clear error: a unit's
servers are processes started in its sandbox and stopped with it.
"""

from __future__ import annotations

import re
from datetime import timedelta
from enum import StrEnum
from fnmatch import fnmatchcase
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from sf_core.errors import SfError

SERVER_NAME = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"
ENV_NAME = r"^[A-Za-z_][A-Za-z0-9_]*$"
# ``${NAME}`` in an environment value: the project secret NAME (SF_SECRET_NAME).
SECRET_REFERENCE = re.compile(r"\$\{([^}]*)\}")
SECRET_NAME = re.compile(r"^[A-Z][A-Z0-9_]{0,63}$")
MAX_SERVERS = 20


class McpConfigInvalid(SfError):
    """An ``mcp.json`` (or a server entry) that does not match its schema."""


class McpRisk(StrEnum):
    """What an MCP tool may do, as the project's policy declares it.

    The gate maps each onto its profile table (``agents_app.gate.mcp``): ``read`` is
    allowed wherever reads are; ``write`` (changes the worktree or state the server
    keeps for this work) from ``normal``; ``external`` (changes something outside the
    machine: a ticket, a message, a remote system) from ``trusted``; ``destructive``
    (cannot be undone) asks a person under every profile. A tool with no class asks.
    """

    READ = "read"
    WRITE = "write"
    EXTERNAL = "external"
    DESTRUCTIVE = "destructive"


class McpServer(BaseModel):
    """One server started as a process: the common shape (``command``, ``args``,
    ``env``). ``type`` may say ``stdio``; a ``url`` is refused (see the module)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: Literal["stdio"] = "stdio"
    command: str = Field(min_length=1, max_length=1000)
    args: list[str] = Field(default_factory=list, max_length=200)
    env: dict[str, str] = Field(default_factory=dict)

    @field_validator("command", "args")
    @classmethod
    def _no_nul(cls, value: Any) -> Any:
        texts = value if isinstance(value, list) else [value]
        if any("\x00" in text for text in texts):
            raise ValueError("must not contain a NUL character")
        return value

    @field_validator("env")
    @classmethod
    def _env(cls, env: dict[str, str]) -> dict[str, str]:
        for name, value in env.items():
            if not re.match(ENV_NAME, name):
                raise ValueError(f"{name!r} is not an environment variable name")
            for secret in secrets_named(value):
                if not SECRET_NAME.match(secret):
                    raise ValueError(
                        f"{name}: ${{{secret}}} must name a project secret "
                        "(upper-case letters, digits and _, as in SF_SECRET_<NAME>)"
                    )
        return env


def _absolute(paths: list[str]) -> list[str]:
    for path in paths:
        if not path.startswith("/") or path.rstrip("/") == "" or "\x00" in path:
            raise ValueError(f"{path!r}: an absolute path other than /")
    return paths


class McpPolicyServer(McpServer):
    """A server of the project's policy, with what SF needs to gate and confine it."""

    # Each tool's risk class, by the server's own tool name; unlisted tools ask.
    tools: dict[str, McpRisk] = Field(default_factory=dict)
    network: bool = False  # the sandbox's network for this server (off by default)
    # Host paths the server may read (where it is installed, if the sandbox hides it:
    # under $HOME, say); absolute. SF's data directory and $HOME itself never are.
    expose: list[str] = Field(default_factory=list, max_length=20)
    startup_timeout_s: int = Field(default=30, ge=1, le=600)
    call_timeout_s: int = Field(default=120, ge=1, le=3600)

    _expose_absolute = field_validator("expose")(_absolute)

    @property
    def startup_timeout(self) -> timedelta:
        return timedelta(seconds=self.startup_timeout_s)

    @property
    def call_timeout(self) -> timedelta:
        return timedelta(seconds=self.call_timeout_s)


class McpPolicy(BaseModel):
    """``mcp`` in a project's policy: its servers and the risk classes of tools."""

    model_config = ConfigDict(extra="forbid")

    servers: dict[str, McpPolicyServer] = Field(default_factory=dict, max_length=MAX_SERVERS)
    # Risk classes by the namespaced tool name (``mcp__<server>__<tool>``) or a glob of
    # it: how the project classes the tools of skills' servers (or overrides a server's
    # own ``tools``). The first matching entry, in the order written, wins.
    tools: dict[str, McpRisk] = Field(default_factory=dict)
    # Whether the servers of skills' mcp.json files start at all.
    skill_servers: bool = True
    # Host paths every server (skills' too) may read: where servers are installed.
    expose: list[str] = Field(default_factory=list, max_length=20)

    _expose_absolute = field_validator("expose")(_absolute)

    @field_validator("servers")
    @classmethod
    def _names(cls, servers: dict[str, McpPolicyServer]) -> dict[str, McpPolicyServer]:
        for name in servers:
            if not re.match(SERVER_NAME, name):
                raise ValueError(
                    f"server name {name!r}: letters, digits, '_', '.', '-' (at most 64)"
                )
        return servers


class McpJson(BaseModel):
    """A skill's ``mcp.json``: ``{"mcpServers": {"<name>": {"command": …}}}``."""

    model_config = ConfigDict(extra="forbid")

    servers: dict[str, McpServer] = Field(alias="mcpServers", max_length=MAX_SERVERS)


def mcp_json_parse(text: str, *, source: str) -> dict[str, McpServer]:
    """The servers of an ``mcp.json``; ``McpConfigInvalid`` naming ``source``, the
    server and the field otherwise."""
    try:
        servers = McpJson.model_validate_json(text).servers
    except ValidationError as exc:
        raise McpConfigInvalid(f"{source}: {_summary(exc)}") from None
    for name in servers:
        if not re.match(SERVER_NAME, name):
            raise McpConfigInvalid(
                f"{source}: mcpServers.{name}: a server name is letters, digits, '_', '.', '-'"
            )
    return servers


def _summary(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors():
        location = ".".join(str(part) for part in error["loc"]) or "(document)"
        message = error["msg"]
        if error["type"] == "extra_forbidden" and location.endswith(".url"):
            message = "servers reached by URL are not supported: give command and args"
        elif error["type"] == "literal_error" and location.endswith(".type"):
            message = "only stdio servers (a command SF starts) are supported"
        parts.append(f"{location}: {message}")
    return "; ".join(parts)


def secrets_named(value: str) -> list[str]:
    """The project secrets an environment value names (``${NAME}``)."""
    return SECRET_REFERENCE.findall(value)


def risk_of(
    tool: str, *, server_tools: dict[str, McpRisk], remote: str, policy: McpPolicy
) -> McpRisk | None:
    """The risk class of namespaced ``tool`` (the server's ``remote`` tool): the policy's
    ``mcp.tools`` first (exact, then globs in order), then the server's own ``tools``;
    None when nothing classes it (the gate asks)."""
    if tool in policy.tools:
        return policy.tools[tool]
    for pattern, risk in policy.tools.items():
        if fnmatchcase(tool, pattern):
            return risk
    return server_tools.get(remote)


def policy_risk(tool: str, policy: McpPolicy) -> str:
    """The risk class ``policy`` gives the namespaced ``tool`` ("" when none), read from
    the name alone (``mcp__<server>__<tool>``), as ``sf gate`` shows it without a unit."""
    _, server, remote = [*tool.split("__", 2), "", ""][:3]
    configured = policy.servers.get(server)
    own = configured.tools if configured is not None else {}
    risk = risk_of(tool, server_tools=own, remote=remote, policy=policy)
    return risk.value if risk else ""
