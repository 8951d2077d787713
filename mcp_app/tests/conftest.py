"""Talking to SF's MCP server from a real MCP client, whatever the transport."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from mcp import Client
from mcp.client.session import ClientSession
from mcp_types import CallToolResult, TextContent

from mcp_app.cli import stdio_token
from mcp_app.tools import mcp_server

Caller = ClientSession | Client


@asynccontextmanager
async def in_process(secret: str) -> AsyncIterator[Client]:
    """An MCP client connected in memory to the server a stdio process would run for
    ``secret`` (the token is looked up on every call, as there)."""
    async with Client(mcp_server(token_of=stdio_token(secret))) as client:
        yield client


def text_of(result: CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, TextContent))


async def call(client: Caller, tool: str, **arguments: Any) -> dict[str, Any]:
    """The structured answer of a tool that must succeed."""
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, f"{tool} failed: {text_of(result)}"
    assert result.structured_content is not None
    assert text_of(result), f"{tool} answered no text for people"
    return result.structured_content


async def refused(client: Caller, tool: str, **arguments: Any) -> dict[str, Any]:
    """The problem a tool that must fail answers with (the API's problem document)."""
    result = await client.call_tool(tool, arguments)
    assert result.is_error, f"{tool} succeeded: {text_of(result)}"
    problem = result.structured_content
    assert problem is not None
    assert problem["type"] == f"/api/problems/{problem['code']}"
    assert text_of(result) == f"{problem['code']}: {problem['detail']}"
    return problem


async def until(
    client: Caller,
    tool: str,
    arguments: dict[str, Any],
    done: Callable[[dict[str, Any]], bool],
    *,
    within: float = 180,
) -> dict[str, Any]:
    """Call ``tool`` until its answer is ``done`` (a worker is doing the work)."""
    deadline = time.monotonic() + within
    while True:
        answer = await call(client, tool, **arguments)
        if done(answer):
            return answer
        if time.monotonic() > deadline:
            raise AssertionError(f"{tool} not done after {within}s: {json.dumps(answer)[:2000]}")
        await asyncio.sleep(0.5)
