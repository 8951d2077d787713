"""SF's MCP server over stdio: ``manage.py sf mcp`` as a subprocess of a real MCP
client session, on the test database, with a real Celery worker running the units from
a recorded trace; and how the command refuses to start without a usable token."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from mcp import StdioServerParameters, stdio_client
from mcp.client.session import ClientSession

from mcp_app.cli import TOKEN_ENV
from mcp_app.tests.conftest import call, journey, server_env
from tests.processes import ROOT, WorkerProcess, backends_of, child_database_url, wait_for

pytestmark = pytest.mark.django_db(transaction=True)


def sf_mcp_env(name: str, secret: str | None, extra: dict[str, str]) -> dict[str, str]:
    env = {**os.environ, "DATABASE_URL": child_database_url(name), **extra}
    env.pop(TOKEN_ENV, None)
    if secret is not None:
        env[TOKEN_ENV] = secret
    return env


@asynccontextmanager
async def stdio_session(secret: str, extra: dict[str, str]) -> AsyncIterator[ClientSession]:
    """A client session with ``manage.py sf mcp`` started for it (its stderr in a log)."""
    name = f"test-mcp-{uuid.uuid4().hex[:8]}"
    server = StdioServerParameters(
        command=sys.executable,
        args=["manage.py", "sf", "mcp"],
        cwd=ROOT,
        env=sf_mcp_env(name, secret, extra),
    )
    log_path = ROOT / ".sf" / "test-logs" / f"{name}.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("w") as errlog:
        async with (
            stdio_client(server, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            yield session
    # The test database is dropped at the end: the server's connection must be gone.
    wait_for(lambda: backends_of(name) == 0, timeout=10, what="the stdio server's sessions")


@pytest.mark.slow
@pytest.mark.asyncio
async def test_the_journey_over_stdio(
    registrar_secret: str, worker: WorkerProcess, traces: Path, repo: Path, tmp_path: Path
) -> None:
    async with stdio_session(registrar_secret, server_env(worker, traces, tmp_path)) as session:
        info = await call(session, "list_projects")
        assert [project["role"] for project in info["items"]] == ["admin"]
        await journey(session, repo=repo)


def run_sf_mcp(secret: str | None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", "sf", "mcp"],
        cwd=ROOT,
        env=sf_mcp_env(f"test-mcp-{uuid.uuid4().hex[:8]}", secret, {}),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_it_refuses_to_start_without_a_token_in_the_environment() -> None:
    finished = run_sf_mcp(None)
    assert finished.returncode == 2
    assert f"set {TOKEN_ENV} to an API token" in finished.stderr
    assert "ps would show it" in finished.stderr
    assert finished.stdout == ""  # stdout is the protocol's alone


def test_it_refuses_to_start_with_a_token_that_is_not_active() -> None:
    finished = run_sf_mcp("sf_not-a-token")
    assert finished.returncode == 2
    assert f"{TOKEN_ENV} is not an active API token" in finished.stderr
    assert finished.stdout == ""
