"""SF's MCP server over streamable HTTP, as an ASGI application (``sf_web.asgi`` mounts
it at ``/mcp``, behind the origin check of ``sf_web.origins``).

Every request carries ``Authorization: Bearer sf_…``, a token from /profile/tokens/;
without an active one the answer is 401 (a problem document, ``WWW-Authenticate:
Bearer``) before the MCP layer sees anything. The transport is *stateless* and answers
with plain JSON: each POST is one self-contained exchange authenticated by its own
bearer, so any of several web processes can answer it (a stateful MCP session would
live in one process's memory), and SF's tools send nothing unasked, so no event stream
is needed.

The SDK's session manager needs a task group that outlives requests, normally entered
in an ASGI lifespan; daphne does not run lifespans, so the first request on an event
loop starts it in a task of that loop, which holds it until the process ends.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from channels.db import database_sync_to_async
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from api_app.models import ApiToken
from api_app.problems import PROBLEM_TYPE, ApiProblem, problem
from api_app.tokens import token_resolve
from mcp_app.server import SfMcpServer
from mcp_app.tools import mcp_server

SCOPE_TOKEN = "sf.api_token"  # the resolved token, in the ASGI scope of the request
UNAUTHENTICATED = "send Authorization: Bearer sf_… (a token from /profile/tokens/)"


def bearer_secret(scope: Scope) -> str:
    """The token in ``Authorization: Bearer …``, or ''."""
    for name, value in scope.get("headers", []):
        if name.lower() == b"authorization":
            scheme, _, secret = value.decode("latin-1").partition(" ")
            return secret.strip() if scheme.lower() == "bearer" else ""
    return ""


def scope_token(request: Any) -> ApiToken:
    """The token this app put in the request's scope (``SfMcpServer.token_of``)."""
    token = getattr(request, "scope", {}).get(SCOPE_TOKEN)
    if not isinstance(token, ApiToken):
        raise ApiProblem(401, "unauthenticated", UNAUTHENTICATED)
    return token


@dataclass
class _Running:
    loop: asyncio.AbstractEventLoop
    manager: StreamableHTTPSessionManager
    ready: asyncio.Event
    task: asyncio.Task[None]


class McpHttpApp:
    """The ASGI application of ``/mcp``: the bearer check, then the SDK's transport."""

    def __init__(self, server: SfMcpServer | None = None) -> None:
        self.server = server or mcp_server(token_of=scope_token)
        self._running: _Running | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        secret = bearer_secret(scope)
        resolve = database_sync_to_async(token_resolve, thread_sensitive=False)
        token = await resolve(secret) if secret else None
        if token is None:
            await _unauthenticated()(scope, receive, send)
            return
        running = self._running_on(asyncio.get_running_loop())
        await running.ready.wait()
        if running.task.done():
            raise RuntimeError("the MCP session manager stopped; see the log above")
        await running.manager.handle_request({**scope, SCOPE_TOKEN: token}, receive, send)

    def _running_on(self, loop: asyncio.AbstractEventLoop) -> _Running:
        # No await between the check and the assignment: two first requests on one
        # loop cannot both start a manager.
        if self._running is None or self._running.loop is not loop:
            self._running = self._start(loop)
        return self._running

    def _start(self, loop: asyncio.AbstractEventLoop) -> _Running:
        # Origins and hosts are checked in front of this app by SF's own validator
        # (SF_ALLOWED_HOSTS, SF_CSRF_TRUSTED_ORIGINS), not the SDK's localhost default.
        self.server.streamable_http_app(
            stateless_http=True,
            json_response=True,
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )
        manager = self.server.session_manager
        ready = asyncio.Event()

        async def hold() -> None:
            try:
                async with manager.run():
                    ready.set()
                    await asyncio.Event().wait()  # until the process ends
            finally:
                ready.set()  # a manager that failed to start must not leave requests waiting

        task = loop.create_task(hold(), name="sf-mcp-session-manager")
        return _Running(loop=loop, manager=manager, ready=ready, task=task)


def _unauthenticated() -> Response:
    body = problem(401, "unauthenticated", UNAUTHENTICATED)
    return Response(
        body.model_dump_json(exclude_none=True),
        status_code=401,
        media_type=PROBLEM_TYPE,
        headers={"WWW-Authenticate": "Bearer"},
    )
