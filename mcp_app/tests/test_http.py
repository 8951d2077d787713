"""SF's MCP server over streamable HTTP: a real daphne process serving ``sf_web.asgi``
(``/mcp`` beside Django), a real MCP client session, a real Celery worker running the
units from a recorded trace; and what the endpoint refuses before the MCP layer."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
from channels.db import database_sync_to_async
from django.contrib.auth.models import User
from mcp import Client
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from agents_app.models import AgentSession
from api_app.tests.test_endpoints import decision
from api_app.tokens import token_create, token_revoke
from conftest import grant
from mcp_app.tests.conftest import call, journey, refused, server_env
from tests.processes import WebProcess, WorkerProcess

# Each test starts daphne (and the journey a Celery worker): seconds, not milliseconds.
pytestmark = [pytest.mark.slow, pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "sf-tests", "version": "1"},
    },
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}


def web_process(worker: WorkerProcess | None, traces: Path, tmp_path: Path) -> Iterator[WebProcess]:
    server = WebProcess(extra_env=server_env(worker, traces, tmp_path))
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def web(transactional_db: None, traces: Path, tmp_path: Path) -> Iterator[WebProcess]:
    yield from web_process(None, traces, tmp_path)


@pytest.fixture
def web_with_worker(worker: WorkerProcess, traces: Path, tmp_path: Path) -> Iterator[WebProcess]:
    yield from web_process(worker, traces, tmp_path)


@asynccontextmanager
async def mcp_session(web: WebProcess, secret: str) -> AsyncIterator[ClientSession]:
    headers = {"Authorization": f"Bearer {secret}"}
    timeout = httpx2.Timeout(30, read=120)
    async with (
        httpx2.AsyncClient(headers=headers, timeout=timeout) as http,
        streamable_http_client(f"{web.url}/mcp", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


async def test_the_journey_over_streamable_http(
    registrar_secret: str, web_with_worker: WebProcess, repo: Path
) -> None:
    async with mcp_session(web_with_worker, registrar_secret) as session:
        tools = await session.list_tools()
        assert "review_task" in {tool.name for tool in tools.tools}
        await journey(session, repo=repo)


async def post(web: WebProcess, body: Any, **headers: str) -> httpx2.Response:
    async with httpx2.AsyncClient(timeout=30) as http:
        return await http.post(f"{web.url}/mcp", json=body, headers={**MCP_HEADERS, **headers})


@pytest.fixture
def secret(user: User) -> str:
    return token_create(user=user, name="mcp").secret


@pytest.fixture
def revoked_secret(user: User) -> str:
    issued = token_create(user=user, name="gone")
    token_revoke(user=user, token_id=issued.token.pk)
    return issued.secret


async def test_no_token_or_a_bad_one_is_401(web: WebProcess, revoked_secret: str) -> None:
    for headers in (
        {},
        {"Authorization": "Bearer sf_not-a-token"},
        {"Authorization": f"Bearer {revoked_secret}"},
        {"Authorization": f"Basic {revoked_secret}"},
    ):
        response = await post(web, INITIALIZE, **headers)
        assert response.status_code == 401, headers
        assert response.headers["WWW-Authenticate"] == "Bearer"
        assert response.headers["Content-Type"] == "application/problem+json"
        assert response.json()["code"] == "unauthenticated"


async def test_a_foreign_origin_is_refused_and_the_sites_own_is_not(
    web: WebProcess, secret: str
) -> None:
    bearer = f"Bearer {secret}"
    foreign = await post(web, INITIALIZE, Authorization=bearer, Origin="http://evil.example")
    assert foreign.status_code == 403
    assert foreign.json()["code"] == "forbidden"
    assert "evil.example" in foreign.json()["detail"]
    rebound = await post(web, INITIALIZE, Authorization=bearer, Host="evil.example")
    assert rebound.status_code == 403
    own = await post(web, INITIALIZE, Authorization=bearer, Origin=web.url)
    assert own.status_code == 200, own.text
    assert own.json()["result"]["serverInfo"]["name"] == "sf"
    unsigned = await post(web, INITIALIZE, Origin="http://evil.example")
    assert unsigned.status_code == 403  # the origin is checked first, then the token
    async with httpx2.AsyncClient(timeout=30) as http:  # Django still answers beside /mcp
        assert (await http.get(f"{web.url}/healthz")).status_code == 200


@pytest.fixture
def stranger(staff_user: User) -> str:
    return token_create(user=staff_user, name="stranger").secret


async def test_roles_hold_over_http(
    web: WebProcess, stranger: str, staff_user: User, agent_session: AgentSession
) -> None:
    """A viewer reads but cannot approve (and is told why); a stranger sees nothing."""
    pending = await database_sync_to_async(decision)(agent_session)
    async with mcp_session(web, stranger) as session:
        problem = await refused(session, "session_status", session_id=agent_session.pk)
        assert problem["code"] == "not-found"
    await database_sync_to_async(grant)(staff_user, agent_session.project, "viewer")
    async with mcp_session(web, stranger) as session:
        # Calls run in worker threads: concurrent ones all answer.
        answers = await asyncio.gather(
            *(call(session, "session_status", session_id=agent_session.pk) for _ in range(8))
        )
        assert {a["session"]["id"] for a in answers} == {agent_session.pk}
        assert [a["id"] for a in answers[0]["pending_approvals"]] == [pending.pk]
        problem = await refused(
            session, "review_decision", decision_id=pending.pk, action="approve"
        )
        assert problem["code"] == "forbidden"
        assert "needs the approver role (you are viewer)" in problem["detail"]


async def test_a_client_of_the_newest_protocol_revision_is_served_too(
    web: WebProcess, secret: str, agent_session: AgentSession
) -> None:
    """``mcp.Client`` probes ``server/discover`` (the 2026-07-28 revision, no
    initialize handshake); the token reaches the tools on that path as well."""
    headers = {"Authorization": f"Bearer {secret}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as http,
        Client(streamable_http_client(f"{web.url}/mcp", http_client=http)) as client,
    ):
        assert client.protocol_version not in HANDSHAKE_PROTOCOL_VERSIONS
        projects = await call(client, "list_projects")
        assert [p["id"] for p in projects["items"]] == [agent_session.project_id]
