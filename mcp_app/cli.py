"""``manage.py sf mcp``: SF's MCP server on stdin/stdout, for a desktop assistant, an
IDE or another agent that starts it as a subprocess (docs/mcp.md).

It acts as the owner of the API token in ``$SF_API_TOKEN``, with their roles. The
token is read from the environment only: on the command line every user of the
machine could read it in ``ps``. It is resolved again on every tool call, so a token
revoked on /profile/tokens/ stops working at once. Stdout carries the protocol and
nothing else; what the command says to people goes to stderr.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from api_app.models import ApiToken
from api_app.problems import ApiProblem
from api_app.tokens import token_resolve
from sf_core.cli import EXIT_OK, EXIT_USAGE, Subcommand

TOKEN_ENV = "SF_API_TOKEN"


def stdio_token(secret: str) -> Callable[[Any], ApiToken]:
    """The caller of a stdio server: the token of ``secret``, looked up on each call."""

    def token_of(request: Any) -> ApiToken:
        token = token_resolve(secret)
        if token is None:
            raise ApiProblem(401, "unauthenticated", f"the token in {TOKEN_ENV} is not active")
        return token

    return token_of


class McpCommand(Subcommand):
    name = "mcp"
    help = (
        f"Serve SF's MCP tools on stdin/stdout, acting as the owner of the API token in "
        f"${TOKEN_ENV} (never on the command line)."
    )

    def run(self, options: dict[str, Any]) -> int:
        secret = os.environ.get(TOKEN_ENV, "").strip()
        if not secret:
            self.err(
                f"set {TOKEN_ENV} to an API token (make one on /profile/tokens/); it is not "
                "taken on the command line, where ps would show it"
            )
            return EXIT_USAGE
        token = token_resolve(secret)
        if token is None:
            self.err(f"{TOKEN_ENV} is not an active API token (revoked, mistyped, user inactive)")
            return EXIT_USAGE
        self.err(f"SF's MCP server on stdio, acting as {token.user.get_username()} ({token})")
        # Imported here: the mcp package takes about 1.5 s to import, and every other
        # `manage.py sf` subcommand loads this module to list its name.
        import anyio

        from mcp_app.tools import mcp_server

        anyio.run(mcp_server(token_of=stdio_token(secret)).run_stdio_async)
        return EXIT_OK


SUBCOMMANDS: list[type[Subcommand]] = [McpCommand]
