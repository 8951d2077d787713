"""The MCP servers of one unit: started in its OS sandbox, listed, called, stopped.

The ``mcp`` package's client is asynchronous (anyio); the agent loop is not. A unit's
hub runs one event loop in a thread of its own (anyio's blocking portal) and the loop
calls into it. Each server is one task there that starts the process, holds its
session open and, when the hub closes, ends it — the package's stdio transport closes
the server's stdin, then SIGTERMs and SIGKILLs its process group, every wait bounded.
One task does both because anyio's cancel scopes must be left by the task that
entered them.

Under bubblewrap a server sees what an agent command sees (the worktree writable, no
network unless granted, and then only through an egress proxy of its own; ``$HOME``
and SF's own files hidden) and lives in a PID namespace of its own with
``--die-with-parent``: whatever it started dies with it, and it dies with the worker's
thread that started it if the worker is killed.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import tempfile
from concurrent.futures import Future, wait
from dataclasses import dataclass, field, replace
from datetime import timedelta
from pathlib import Path
from typing import IO, Any, TextIO, cast

import anyio
from anyio.from_thread import BlockingPortal, start_blocking_portal

from agents_app.runtime.egress import EgressProxy, bridge_problem
from agents_app.runtime.sandbox import (
    Launch,
    SandboxPolicy,
    SandboxRefused,
    egress_hosts,
    home_dir,
    profile_problem,
    sandbox_prefix,
    sandbox_state,
    sf_own_paths,
)
from agents_app.runtime.sandbox_limits import pids_cgroup
from agents_app.runtime.sandbox_user import host_user
from sf_core.errors import SfError

logger = logging.getLogger("sf.mcp")

STOP_WAIT_S = 15  # the transport's own shutdown is bounded at about 6 s per server
STDERR_SHOWN = 1500  # characters of a server's stderr quoted in an error
TOOLS_PAGES = 20  # tools/list pages read at most


class McpStartFailed(SfError):
    """A server that could not be started or did not list its tools."""


class McpCallFailed(Exception):
    """A tool call that did not come back with a result (the message says why)."""


@dataclass(frozen=True)
class ServerLaunch:
    """What to start: the program, its environment (secrets resolved) and its limits."""

    name: str
    command: str
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    network: bool = False
    expose: tuple[Path, ...] = ()
    startup_timeout: timedelta = timedelta(seconds=30)
    call_timeout: timedelta = timedelta(seconds=120)


@dataclass(frozen=True)
class ListedTool:
    """One tool as its server lists it."""

    server: str
    name: str
    description: str
    input_schema: dict[str, Any]


@dataclass
class _Running:
    launch: ServerLaunch
    client: Any  # mcp.Client
    future: Future[None]
    stderr: IO[str]


@dataclass
class McpHub:
    """The servers of one unit. ``with McpHub(...) as hub:`` — every server is stopped
    when the block ends, however it ends."""

    worktree: Path
    sandbox: SandboxPolicy
    _stack: contextlib.ExitStack = field(default_factory=contextlib.ExitStack)
    _portal: BlockingPortal | None = None
    _stop: Any = None  # anyio.Event, made in the portal's loop
    _running: dict[str, _Running] = field(default_factory=dict)

    def __enter__(self) -> McpHub:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    @property
    def sandboxed(self) -> bool:
        return sandbox_state().sandboxed

    def start(self, launch: ServerLaunch) -> list[ListedTool]:
        """Start ``launch`` and list its tools; ``McpStartFailed`` with the reason (and
        the end of what the server wrote on stderr) otherwise."""
        argv, env = self._argv(launch)
        # Appending: the server writes through the same open file, and reading its tail
        # must not move where the server writes next.
        # It lives as long as the server (closed in ``close``), not a block of this method.
        stderr = tempfile.TemporaryFile("a+", encoding="utf-8", errors="replace")  # noqa: SIM115
        portal = self._portal_started()
        try:
            future, (client, tools) = portal.start_task(
                self._serve, launch, argv, env, stderr, name=f"mcp-{launch.name}"
            )
        except Exception as exc:  # whatever the server did, the unit goes on without it
            reason = f"{launch.name}: {_describe(exc)}{_tail(stderr)}"
            stderr.close()
            raise McpStartFailed(reason) from None
        self._running[launch.name] = _Running(launch, client, future, stderr)
        return list(tools)

    def call(self, server: str, tool: str, arguments: dict[str, Any]) -> Any:
        """Call ``tool`` of ``server``: its ``CallToolResult``, or ``McpCallFailed``."""
        running = self._running.get(server)
        if running is None or self._portal is None:
            raise McpCallFailed(f"the {server} MCP server is not running")
        if running.future.done():
            raise McpCallFailed(f"the {server} MCP server has stopped{_tail(running.stderr)}")
        timeout = running.launch.call_timeout.total_seconds()
        try:
            return self._portal.call(_call, running.client, tool, arguments, timeout)
        except TimeoutError:
            raise McpCallFailed(f"{server} did not answer {tool} within {timeout:g} s") from None
        except Exception as exc:  # a protocol error, a dead server: the model is told
            raise McpCallFailed(
                f"{server} failed on {tool}: {_describe(exc)}{_tail(running.stderr)}"
            ) from None

    def close(self) -> None:
        """Stop every server (bounded), then the event loop and its thread."""
        if self._portal is None:
            self._stack.close()
            return
        portal, self._portal = self._portal, None
        try:
            portal.call(self._stop.set)
            futures = [running.future for running in self._running.values()]
            _, late = wait(futures, timeout=STOP_WAIT_S)
            if late:
                logger.warning("%d MCP servers did not stop within %s s", len(late), STOP_WAIT_S)
            portal.call(portal.stop, True)
        finally:
            self._stack.close()  # joins the loop's thread
            for running in self._running.values():
                running.stderr.close()
            self._running.clear()

    def _portal_started(self) -> BlockingPortal:
        if self._portal is None:
            self._portal = self._stack.enter_context(start_blocking_portal(name="sf-mcp"))
            self._stop = self._portal.call(anyio.Event)
        return self._portal

    def _argv(self, launch: ServerLaunch) -> tuple[list[str], dict[str, str]]:
        """The program to run (inside bwrap when the sandbox is on) and its environment."""
        problem = profile_problem(self.sandbox.profile)
        if problem:
            raise McpStartFailed(f"{launch.name}: {problem}")
        program = [launch.command, *launch.args]
        state = sandbox_state()
        if not state.sandboxed:  # SF_SANDBOX=off: a process group with HOME at the worktree
            return program, {**launch.env, "HOME": str(self.worktree)}
        policy = replace(
            self.sandbox,
            network=launch.network,
            egress=self.sandbox.egress if launch.network else (),
        )
        hosts = egress_hosts(policy)
        if hosts and bridge_problem():
            raise McpStartFailed(f"{launch.name}: {bridge_problem()}")
        # Its only way out, if any: a proxy of its own, stopped with the hub.
        proxy = self._stack.enter_context(EgressProxy(hosts)) if hosts else None
        launch_as = Launch(
            user=host_user(),
            cgroup=pids_cgroup(policy.limits),  # removed by a later sweep once empty
            proxy=proxy,
        )
        try:
            try:
                prefix = self._prefix(policy, launch, launch_as)
            except OSError as exc:  # no ACLs here: bwrap runs as SF's user, as before
                logger.warning("%s: the sandbox runs as SF's user: %s", launch.name, exc)
                prefix = self._prefix(policy, launch, replace(launch_as, user=None))
        except SandboxRefused as exc:
            raise McpStartFailed(f"{launch.name}: {exc}") from None
        return [*prefix, *program], dict(launch.env)

    def _prefix(self, policy: SandboxPolicy, launch: ServerLaunch, how: Launch) -> list[str]:
        return sandbox_prefix(
            worktree=self.worktree,
            policy=policy,
            bwrap=sandbox_state().bwrap,
            home=home_dir(),
            hidden=sf_own_paths(),
            expose=[path for path in launch.expose if path.exists()],
            launch=how,
        )

    async def _serve(
        self,
        launch: ServerLaunch,
        argv: list[str],
        env: dict[str, str],
        stderr: IO[str],
        *,
        task_status: Any,
    ) -> None:
        """Start, list, report ready, then hold the session open until the hub stops."""
        # Imported here: the package takes a second to import, and most units start no server.
        from mcp import Client, StdioServerParameters
        from mcp.client.stdio import stdio_client

        params = StdioServerParameters(command=argv[0], args=argv[1:], env=env, cwd=self.worktree)
        timeout = launch.startup_timeout.total_seconds()
        with anyio.CancelScope(deadline=anyio.current_time() + timeout) as scope:
            async with Client(
                stdio_client(params, errlog=cast(TextIO, stderr)), cache=None
            ) as client:
                tools = await _tools_of(client, launch.name)
                scope.deadline = math.inf  # started: from now on only the hub ends it
                task_status.started((client, tools))
                await self._stop.wait()
        if scope.cancelled_caught:
            raise McpStartFailed(f"did not start and list its tools within {timeout:g} s")


async def _tools_of(client: Any, server: str) -> list[ListedTool]:
    tools: list[ListedTool] = []
    cursor = None
    for _ in range(TOOLS_PAGES):
        page = await client.list_tools(cursor=cursor)
        tools += [
            ListedTool(server, tool.name, tool.description or tool.title or "", tool.input_schema)
            for tool in page.tools
        ]
        cursor = page.next_cursor
        if cursor is None:
            break
    return tools


async def _call(client: Any, tool: str, arguments: dict[str, Any], seconds: float) -> Any:
    with anyio.fail_after(seconds):
        return await client.call_tool(tool, arguments)


def _describe(exc: BaseException) -> str:
    """One line for an exception; an exception group says what is inside it."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, McpStartFailed):
        return str(exc)
    if isinstance(exc, FileNotFoundError):
        return f"cannot run {exc.filename or 'the command'}: no such file"
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def _tail(stderr: IO[str]) -> str:
    """The end of what a server wrote on stderr, for an error message ('' if nothing)."""
    with contextlib.suppress(OSError, ValueError):
        stderr.flush()
        size = stderr.seek(0, os.SEEK_END)
        stderr.seek(max(0, size - STDERR_SHOWN * 4))
        text = stderr.read()[-STDERR_SHOWN:].strip()
        stderr.seek(0, os.SEEK_END)
        if text:
            return f"; its stderr ends: {text}"
    return ""
