"""A unit's MCP servers: which start, with what, and what the model and the gate learn.

Servers come from the project's policy (``mcp.servers``) and from the ``mcp.json`` of
the skills on offer in the unit (``skills_app.mcp``), the policy's first; a skill's
server whose name is taken is not started. Each starts when the unit starts, in the
unit's sandbox with the worktree as its working directory, and stops when the unit
ends, however it ends (``unit_mcp`` is a context manager around the agent loop).

A server that cannot start or list its tools is an ``error`` event in the trace and a
line in the prompt; the unit goes on without its tools. Each started server is a
``note`` event naming its tools. Every tool gets its risk class from the policy
(``mcp_schemas.risk_of``), or none: the gate asks for those.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings

from agents_app.gate.mcp import mcp_offered, risk_class
from agents_app.mcp_schemas import (
    SECRET_REFERENCE,
    McpPolicy,
    McpPolicyServer,
    McpServer,
    risk_of,
)
from agents_app.models import TraceKind
from agents_app.runtime.mcp_hub import McpHub, McpStartFailed, ServerLaunch
from agents_app.runtime.mcp_tools import McpTool, mcp_tool, schema_problem, tool_name
from agents_app.runtime.sandbox import SandboxPolicy, home_dir
from agents_app.runtime.tools import COMMAND_ENV_KEEP
from agents_app.runtime.trace import TraceRecorder
from sf_core.secrets import SecretMissing, secret_value

POLICY = "the project's policy"
DESCRIPTION_SHOWN = 160


@dataclass(frozen=True)
class ServerEntry:
    """A server to start for a unit, and where it was declared."""

    name: str
    server: McpServer
    source: str = POLICY  # or "skill <name>"
    skill: str = ""
    expose: tuple[Path, ...] = ()  # a user skill's folder, for ${SKILL_DIR}


@dataclass
class UnitMcp:
    """What the unit's servers offer: tools, their risk classes, what failed."""

    tools: dict[str, McpTool] = field(default_factory=dict)
    risks: dict[str, str] = field(default_factory=dict)  # tool → risk ("" unclassed)
    failed: dict[str, str] = field(default_factory=dict)  # server → why it did not start
    by_skill: dict[str, list[str]] = field(default_factory=dict)  # skill → its tools
    failed_by_skill: dict[str, list[str]] = field(default_factory=dict)  # skill → failures

    def skill_notes(self) -> dict[str, str]:
        """What ``load_skill`` adds to the body of a skill with an ``mcp.json``."""
        notes = {}
        for skill in {*self.by_skill, *self.failed_by_skill}:
            parts = []
            if self.by_skill.get(skill):
                parts.append(
                    "Its MCP servers (mcp.json) run for this unit; their tools: "
                    + ", ".join(self.by_skill[skill])
                    + "."
                )
            if self.failed_by_skill.get(skill):
                parts.append(
                    "Of its MCP servers, these did not start (their tools are not available): "
                    + "; ".join(self.failed_by_skill[skill])
                )
            notes[skill] = " ".join(parts)
        return notes

    def prompt_section(self, profile: str) -> str:
        """Brief: each tool offered under ``profile`` with its class, then what failed."""
        offered = mcp_offered(profile, self.risks)
        if not offered and not self.failed:
            return ""
        lines = ["## MCP tools (of MCP servers started for this unit; call them like any tool)"]
        for name in offered:
            about = self.tools[name].description
            shown = about if len(about) <= DESCRIPTION_SHOWN else about[:159] + "…"
            lines.append(f"- {name} ({risk_class(self.risks[name])}): {shown}")
        if self.failed:
            lines.append("MCP servers that did not start (their tools are not available):")
            lines += [f"- {server}: {why}" for server, why in self.failed.items()]
        return "\n".join(lines)


def policy_entries(policy: McpPolicy) -> list[ServerEntry]:
    return [ServerEntry(name, server) for name, server in policy.servers.items()]


@contextmanager
def unit_mcp(
    *,
    entries: Sequence[ServerEntry],
    problems: Sequence[tuple[str, str]] = (),
    policy: McpPolicy,
    worktree: Path,
    sandbox: SandboxPolicy,
    recorder: TraceRecorder,
) -> Iterator[UnitMcp]:
    """Start ``entries`` for the unit, yield what they offer, stop them all on leaving.
    ``problems``: (server or file, why) found before starting (an invalid mcp.json)."""
    mcp = UnitMcp()
    for where, why in problems:
        _failed(mcp, recorder, where, "", why)
    if not entries:
        yield mcp
        return
    with McpHub(worktree=worktree, sandbox=sandbox) as hub:
        declared: set[str] = set()
        for entry in entries:
            if entry.name in declared:
                why = f"a server named {entry.name} is declared before it"
                _failed(mcp, recorder, f"{entry.name} ({entry.source})", entry.skill, why)
                continue
            declared.add(entry.name)
            _start(entry, hub, mcp, policy, sandbox, recorder)
        yield mcp


def _start(
    entry: ServerEntry,
    hub: McpHub,
    mcp: UnitMcp,
    policy: McpPolicy,
    sandbox: SandboxPolicy,
    recorder: TraceRecorder,
) -> None:
    try:
        listed = hub.start(launch_of(entry, sandbox, policy))
    except McpStartFailed as exc:
        _failed(mcp, recorder, entry.name, entry.skill, str(exc).removeprefix(f"{entry.name}: "))
        return
    own = entry.server.tools if isinstance(entry.server, McpPolicyServer) else {}
    offered, skipped = [], []
    for tool in listed:
        problem = schema_problem(tool.input_schema)
        if problem:
            skipped.append(f"{tool.name}: {problem}")
            continue
        name = tool_name(entry.name, tool.name, set(mcp.tools))
        mcp.tools[name] = mcp_tool(tool, name, hub.call)
        risk = risk_of(name, server_tools=own, remote=tool.name, policy=policy)
        mcp.risks[name] = risk.value if risk else ""
        offered.append(name)
    if entry.skill:
        mcp.by_skill.setdefault(entry.skill, []).extend(offered)
    recorder.record(
        TraceKind.NOTE,
        name=f"mcp:{entry.name}",
        payload={
            "mcp_server": entry.name,
            "source": entry.source,
            "sandboxed": hub.sandboxed,
            "tools": {name: risk_class(mcp.risks[name]) for name in offered},
            "skipped": skipped,
        },
    )


def _failed(mcp: UnitMcp, recorder: TraceRecorder, server: str, skill: str, why: str) -> None:
    mcp.failed[server] = why
    if skill:
        mcp.failed_by_skill.setdefault(skill, []).append(f"{server}: {why}")
    recorder.record(
        TraceKind.ERROR,
        name=f"mcp:{server}",
        payload={"mcp_server": server, "skill": skill, "error": f"not started: {why}"},
    )


def launch_of(entry: ServerEntry, sandbox: SandboxPolicy, policy: McpPolicy) -> ServerLaunch:
    """What to run for ``entry``: secrets resolved, paths to expose checked."""
    server = entry.server
    env = {k: os.environ[k] for k in COMMAND_ENV_KEEP if k in os.environ} | {"TERM": "dumb"}
    try:
        env |= {name: _with_secrets(value) for name, value in server.env.items()}
    except SecretMissing as exc:
        raise McpStartFailed(f"{entry.name}: {exc}") from None
    own = server.expose if isinstance(server, McpPolicyServer) else []
    expose = (
        *(_exposable(entry.name, Path(path)) for path in [*policy.expose, *own]),
        *entry.expose,
    )
    if not isinstance(server, McpPolicyServer):  # a skill's: the commands' network
        return ServerLaunch(
            entry.name, server.command, tuple(server.args), env, sandbox.network, expose
        )
    return ServerLaunch(
        entry.name,
        server.command,
        tuple(server.args),
        env,
        network=server.network or sandbox.network,
        expose=expose,
        startup_timeout=server.startup_timeout,
        call_timeout=server.call_timeout,
    )


def _with_secrets(value: str) -> str:
    return SECRET_REFERENCE.sub(lambda found: secret_value(found.group(1)), value)


def _exposable(server: str, path: Path) -> Path:
    """``path``, unless exposing it would show SF's data directory or the home folder."""
    resolved = path.resolve()
    for secret in (Path(settings.SF_DATA_DIR), home_dir()):
        if secret is not None and secret.resolve().is_relative_to(resolved):
            raise McpStartFailed(
                f"{server}: expose {path} would show {secret} to the server; expose a "
                "folder inside it instead"
            )
    return resolved
