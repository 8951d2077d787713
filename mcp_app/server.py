"""The MCP server object and how a tool answers: the caller's token, one operation of
``api_app.operations`` in Django's sync world, a result for people and for programs.

A tool's success is a ``CallToolResult`` whose ``structuredContent`` is the API's own
schema (published as the tool's output schema) and whose text says the same for a
person. Its failure is an MCP *tool error* (``isError``) whose ``structuredContent`` is
the API's problem document — the same stable ``code`` (``not-found``, ``forbidden``,
``conflict``, ``validation``, ``unauthenticated``, …) a problem+json answer carries.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, TypeVar

from channels.db import database_sync_to_async
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp_types import CallToolResult, InputRequiredResult, TextContent
from pydantic import BaseModel, ValidationError

from api_app.models import ApiToken
from api_app.problems import Problem, problem, problem_of

logger = logging.getLogger("sf.mcp")

# Who calls: the transport's request (a Starlette request on HTTP, None on stdio) → the
# caller's active token. Raises a 401 ``ApiProblem`` when there is none.
TokenOf = Callable[[Any], ApiToken]
Out = TypeVar("Out", bound=BaseModel)

INSTRUCTIONS = (
    "SF turns an intent into verified code changes made by agents in git worktrees. "
    "Drive it as a person would: list_projects, state_intent (planning runs on a worker: "
    "poll show_plan_request until it is planned), show_plan, accept_plan (autonomous runs "
    "the units), list_tasks / show_task / show_unit, list_decisions and review_decision "
    "when a unit waits for a person's approval, review_task when a task waits in review "
    "(approve merges it once the merged tree verifies), session_status for the whole "
    "picture. Every call acts as the token's owner, with their role on the project; an "
    "error's structured content carries a stable code (not-found, forbidden, conflict, …)."
)


class SfMcpServer(MCPServer):
    """``MCPServer`` that knows how to find the caller's token and answers argument
    errors as the API does (a ``validation`` problem naming the fields)."""

    def __init__(self, *, token_of: TokenOf) -> None:
        super().__init__(name="sf", title="SF", instructions=INSTRUCTIONS)
        self.token_of = token_of

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        try:
            return await super().call_tool(name, arguments, context)
        except UnexpectedToolError as exc:
            # A tool builds the API's input schema from its arguments: what that schema
            # refuses (a blank intent, NUL in a title) is the caller's error, as in the API.
            if isinstance(exc.__cause__, ValidationError):
                return problem_result(_validation_problem(exc.__cause__))
            raise
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                return problem_result(_validation_problem(exc.__cause__))
            if name not in {tool.name for tool in await self.list_tools()}:
                return problem_result(problem(404, "not-found", f"no tool named {name!r}"))
            raise


def _validation_problem(exc: ValidationError) -> Problem:
    errors = [
        {"loc": list(error["loc"]), "msg": error["msg"], "type": error["type"]}
        for error in exc.errors(include_url=False, include_input=False)
    ]
    fields = ", ".join(".".join(str(part) for part in error["loc"]) for error in errors)
    return problem(422, "validation", f"the arguments have invalid fields: {fields}", errors)


def problem_result(found: Problem) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=f"{found.code}: {found.detail}")],
        structured_content=found.model_dump(mode="json", exclude_none=True),
        is_error=True,
    )


def success_result(output: BaseModel, text: str) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content=output.model_dump(mode="json"),
    )


async def answer(
    ctx: Context[Any, Any],
    render: Callable[[Out], str],
    operation: Callable[..., Out],
    **arguments: Any,
) -> CallToolResult:
    """Call ``operation(token=…, **arguments)`` as the caller and answer with its output
    and ``render``'s text, or with the problem it raised.

    Django's ORM is synchronous: the call runs in a worker thread through
    ``database_sync_to_async``, which closes stale database connections before and
    after (no request cycle does it here). Not thread-sensitive: each call is complete
    in itself (its transactions open and close inside it), and one shared thread would
    make every MCP client of a web process wait for the slowest call."""
    server = ctx.mcp_server
    if not isinstance(server, SfMcpServer):  # pragma: no cover - tools are registered on one
        raise TypeError("SF's tools run on SfMcpServer")
    request = ctx.request_context.request
    call = database_sync_to_async(_call, thread_sensitive=False)
    return await call(server.token_of, request, render, operation, arguments)


def _call(
    token_of: TokenOf,
    request: Any,
    render: Callable[[Out], str],
    operation: Callable[..., Out],
    arguments: dict[str, Any],
) -> CallToolResult:
    try:
        output = operation(token=token_of(request), **arguments)
    except Exception as exc:
        found = problem_of(exc)
        if found is None:
            logger.exception("MCP tool %s failed", getattr(operation, "__name__", operation))
            found = problem(500, "internal", "SF failed to answer; its log has the details")
        return problem_result(found)
    return success_result(output, render(output))
