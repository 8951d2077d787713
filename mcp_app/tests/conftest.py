"""Talking to SF's MCP server from a real MCP client, whatever the transport."""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from mcp import Client
from mcp.client.session import ClientSession
from mcp_types import CallToolResult, TextContent

from api_app.tokens import token_create
from conftest import may_register
from mcp_app.cli import stdio_token
from mcp_app.tools import mcp_server
from tasks_app.engine.replaying import demo_repo_create
from tasks_app.tests.intent_traces import INTENT, intent_trace
from tests.processes import WorkerProcess

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


# --- the journey, on real processes ---------------------------------------------------

NO_MODELS = {"SF_MODEL_FAST": "", "SF_MODEL_SMART": "", "SF_MODEL_DEEP": ""}
TRACE = "hello-journey.jsonl"


@pytest.fixture
def traces(tmp_path: Path) -> Path:
    """The offered traces: the planner's answer and the units' steps for INTENT."""
    folder = tmp_path / "traces"
    folder.mkdir()
    intent_trace(folder / TRACE)
    return folder


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """The sample repository (examples/sample-repo) in a fresh git repository."""
    return demo_repo_create(tmp_path / "greet")


@pytest.fixture
def registrar_secret(user: User, project: Any) -> str:
    """A token of a person who may register repositories (the register-repository
    permission; admin of a project is not enough)."""
    return token_create(user=may_register(user), name="mcp journey").secret


@pytest.fixture
def worker(transactional_db: None, traces: Path) -> Iterator[WorkerProcess]:
    """A real Celery worker on a queue of its own, answering models from the traces."""
    process = WorkerProcess(extra_env={**NO_MODELS, "SF_REPLAY_TRACES": str(traces)})
    process.start()
    try:
        yield process
    finally:
        process.stop()


def server_env(worker: WorkerProcess | None, traces: Path, tmp_path: Path) -> dict[str, str]:
    """What SF's MCP server process needs beside the test database: where planning and
    units go (the worker's queue), the offered traces, and where repositories may be."""
    env = {**NO_MODELS, "SF_REPLAY_TRACES": str(traces), "SF_REPO_ROOTS": str(tmp_path.resolve())}
    if worker is not None:
        env["SF_CELERY_QUEUE"] = worker.queue
    return env


async def journey(client: Caller, *, repo: Path) -> None:
    """Issue 17's journey driven through MCP tools alone: register the repository, state
    an intent (planned on the worker from the recorded trace), read the plan, run it
    autonomously, approve the push its unit asks for, read the task and its unit,
    approve the task in review, and see it merged into the repository."""
    project = await call(client, "register_project", name="greet", repo_path=str(repo))
    assert project["role"] == "admin"
    request = await call(
        client, "state_intent", project_id=project["id"], intent=INTENT, replay=TRACE
    )
    assert request["status"] == "planning"
    planned = await until(
        client,
        "show_plan_request",
        {"request_id": request["id"]},
        lambda r: r["status"] != "planning",
    )
    assert planned["status"] == "planned", planned
    plan = await call(client, "show_plan", plan_id=planned["plan_id"])
    assert [(t["key"], t["status"]) for t in plan["tasks"]] == [("hello", "todo")]
    session_id = plan["session_id"]
    accepted = await call(client, "accept_plan", plan_id=plan["id"], autonomous=True)
    assert accepted["accepted_at"] is not None
    await approve_the_push(client, session_id)
    in_review = await until(client, "list_tasks", {"session_id": session_id}, _task_is("review"))
    task = await call(client, "show_task", task_id=in_review["items"][0]["id"])
    unit = await call(client, "show_unit", unit_id=task["units"][-1]["id"])
    assert [(f["path"], f["status"]) for f in unit["files"]] == [("hello.txt", "added")]
    assert "+hello" in unit["patch"]
    reviewed = await call(client, "review_task", task_id=task["id"], action="approve")
    assert reviewed["status"] in ("review", "done")  # the merge queue runs on the worker
    await until(client, "list_tasks", {"session_id": session_id}, _task_is("done"))
    status = await call(client, "session_status", session_id=session_id)
    assert [(t["key"], t["status"]) for t in status["tasks"]] == [("hello", "done")]
    assert await asyncio.to_thread(last_subject, repo) == "sf: merge hello: Write hello.txt"
    assert (repo / "hello.txt").read_text() == "hello\n"


def last_subject(repo: Path) -> str:
    """The subject of the newest commit on the repository's main branch."""
    log = subprocess.run(
        ["git", "log", "--format=%s", "-1", "main"],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    )
    return log.stdout.strip()


async def approve_the_push(client: Caller, session_id: int) -> None:
    """Under the normal profile the unit's ``git push`` waits for a person: the task is
    blocked and a pending decision names the command."""
    await until(client, "list_tasks", {"session_id": session_id}, _task_is("blocked"))
    pending = await until(client, "list_decisions", {}, lambda page: page["count"] > 0)
    decision = pending["items"][0]
    assert decision["session_id"] == session_id
    assert decision["input"]["command"] == "git push origin main"
    approved = await call(client, "review_decision", decision_id=decision["id"], action="approve")
    assert approved["review_status"] == "approved"


def _task_is(status: str) -> Callable[[dict[str, Any]], bool]:
    def check(page: dict[str, Any]) -> bool:
        current = page["items"][0]["status"]
        if current in ("failed", "cancelled") and current != status:
            raise AssertionError(f"the task ended {current}: {page['items'][0]}")
        return bool(current == status)

    return check
