"""The live events of a session from a real daphne process, read by an httpx streaming
client while a replayed run happens: the same events, in the same order, as headless's
stream-json gives for a run of the same trace; resumable without duplicates."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from django.contrib.auth.models import User

from agents_app.models import AgentSession, ProjectMembership, Role
from agents_app.runtime.replay import replay_load
from agents_app.services import project_create
from api_app.tests.sse import Stream, read, read_in_background
from api_app.tokens import token_create
from conftest import make_git_repo
from tasks_app.engine.drain import drain
from tasks_app.engine.replaying import demo_repo_create
from tasks_app.engine.unit import UnitOptions
from tasks_app.replays import recorded_profile
from tests.headless_runs import headless, new_run
from tests.processes import ROOT, WebProcess, backends_of

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]
TRACE = ROOT / "examples" / "demo-trace.jsonl"


@pytest.fixture
def web(transactional_db: None) -> Iterator[WebProcess]:
    server = WebProcess(extra_env={"SF_API_EVENTS_HEARTBEAT": "1s", "SF_API_EVENTS_POLL": "2s"})
    server.start()
    try:
        yield server
    finally:
        server.stop()


def bearer(user: User) -> dict[str, str]:
    return {"Authorization": f"Bearer {token_create(user=user, name='live').secret}"}


def signature(event: Any) -> tuple[Any, ...]:
    """What identifies an event apart from its timing."""
    keys = {
        "plan": ("status",),
        "transition": ("status",),
        "task": ("task", "from_status", "to_status"),
        "unit": ("task", "status"),
        "tool_call": ("tool", "input_hash", "ok"),
        "result": ("status", "exit_code"),
    }.get(event.type, ())
    return (event.type, *(getattr(event, key) for key in keys))


def run_through_the_api(web: WebProcess, user: User, repo: Path) -> tuple[Stream, int]:
    """Session and plan through the API, the stream open from the start; the units
    run here from the trace (the inline driver, as in test_journey)."""
    project = project_create(name="greet", repo_path=str(repo))
    ProjectMembership.objects.create(project=project, user=user, role=Role.ADMIN)
    headers = bearer(user)
    with httpx.Client(base_url=web.url + "/api", headers=headers, timeout=30) as api:
        return _run(web, api, headers, project.pk)


def _run(
    web: WebProcess, api: httpx.Client, headers: dict[str, str], project: int
) -> tuple[Stream, int]:
    session = api.post("/sessions", json={"project_id": project, "title": "live"}).json()
    replay = replay_load(TRACE)
    AgentSession.objects.filter(pk=session["id"]).update(replay_trace=str(TRACE), driver="inline")
    stream, thread = read_in_background(f"{web.url}/api/sessions/{session['id']}/events", headers)
    stream.wait_for(lambda e: e.type == "session")
    plan = api.post(
        f"/sessions/{session['id']}/plans",
        json={"name": "plan.yaml", "content": str(replay.header["plan_yaml"])},
    ).json()
    # Accepting before the stream saw the proposal would fold both into one event.
    stream.wait_for(lambda e: e.type == "plan" and e.status == "proposed")
    accepted = api.post(
        f"/plans/{plan['id']}/accept",
        json={"autonomous": True, "permission_profile": recorded_profile(replay.header)},
    )
    assert accepted.status_code == 200, accepted.text
    assert drain(session_id=session["id"], worker="test", options=UnitOptions(replay=replay)) == 1
    thread.join(timeout=60)
    assert stream.ended.is_set()
    assert stream.error is None, stream.error
    return stream, session["id"]


def test_a_replayed_run_streams_headless_events_in_order_and_resumes(
    web: WebProcess, user: User, tmp_path: Path
) -> None:
    stream, session_id = run_through_the_api(web, user, demo_repo_create(tmp_path / "api"))
    assert stream.status == 200
    assert stream.content_type.startswith("text/event-stream")
    assert stream.retry is not None
    events = stream.events()  # each message's data validates against the event schema
    assert events[0].type == "session"
    assert events[0].session == session_id
    assert events[-1].type == "result"
    assert (events[-1].status, events[-1].ok) == ("success", True)
    assert all(m.id for m in stream.messages if m.event.type != "heartbeat")
    ids = [m.id for m in stream.messages if m.id]
    assert len(ids) == len(set(ids))

    cli = headless(
        *new_run(demo_repo_create(tmp_path / "cli"), TRACE), "--output-format", "stream-json"
    )
    assert cli.code == 0, cli.stderr
    reference = [e for e in cli.events() if e.type != "heartbeat"]
    assert sorted(e.type for e in events) == sorted(e.type for e in reference)
    # Each kind in the same order with the same content. Across kinds the order follows
    # the commits the observer saw in each look (a unit row may commit after the task
    # move it precedes in time), in headless as in the stream, so it is not compared.
    for kind in {e.type for e in reference} - {"session"}:
        assert [signature(e) for e in events if e.type == kind] == [
            signature(e) for e in reference if e.type == kind
        ], kind

    # Resume after the fifth event: exactly the rest, nothing twice.
    url = f"{web.url}/api/sessions/{session_id}/events"
    headers = bearer(user)
    fifth = [m for m in stream.messages if m.id][4]
    resumed = read(url, {**headers, "Last-Event-ID": str(fifth.id)}, Stream())
    rest = stream.messages[stream.messages.index(fifth) + 1 :]
    assert [signature(e) for e in resumed.events()] == [
        signature(m.event) for m in rest if m.event.type != "heartbeat"
    ]
    assert resumed.events()[0].type != "session"
    # After the result there is nothing more: 204 tells EventSource to stop.
    last = read(url, {**headers, "Last-Event-ID": str(stream.messages[-1].id)}, Stream())
    assert last.status == 204
    assert last.messages == []


async def _hold_streams(url: str, headers: dict[str, str], count: int, measure: Any) -> Any:
    """Open ``count`` streams at once (as many clients do), wait until each has had its
    first event, measure, then hang up."""
    opened = asyncio.Semaphore(0)
    release = asyncio.Event()

    async def watch(client: httpx.AsyncClient) -> None:
        async with client.stream("GET", url, headers=headers) as response:
            async for line in response.aiter_lines():
                if line.startswith("data:"):
                    opened.release()
                    await release.wait()
                    return

    async with httpx.AsyncClient(timeout=60) as client:
        watchers = [asyncio.create_task(watch(client)) for _ in range(count)]
        for _ in range(count):
            await asyncio.wait_for(opened.acquire(), timeout=60)
        result = measure()
        release.set()
        await asyncio.gather(*watchers)
    return result


def test_open_streams_hold_no_thread_or_database_connection_each(
    web: WebProcess, user: User, tmp_path: Path
) -> None:
    project = project_create(name="many", repo_path=str(make_git_repo(tmp_path / "r")))
    ProjectMembership.objects.create(project=project, user=user, role=Role.ADMIN)
    session = AgentSession.objects.create(project=project, title="watched by many")
    assert web.process is not None
    pid = web.process.pid

    def measure() -> tuple[int, int]:
        return len(os.listdir(f"/proc/{pid}/task")), backends_of(web.name)

    url = f"{web.url}/api/sessions/{session.pk}/events"
    # Django would hold a thread (and its connection) per open request; the streams
    # share one thread for Django's work and the loop's default executor (at most
    # cpu + 4 threads) for their looks at the database.
    pool = min(32, (os.cpu_count() or 1) + 4)
    streams = 40
    threads, connections = asyncio.run(_hold_streams(url, bearer(user), streams, measure))
    assert threads <= pool + 6 < streams, threads
    assert connections <= pool + 4 < streams, connections


def test_strangers_get_404_and_no_token_401(
    web: WebProcess, user: User, staff_user: User, tmp_path: Path
) -> None:
    project = project_create(name="mine", repo_path=str(make_git_repo(tmp_path / "r")))
    ProjectMembership.objects.create(project=project, user=user, role=Role.ADMIN)
    session = AgentSession.objects.create(project=project, title="private")
    url = f"{web.url}/api/sessions/{session.pk}/events"
    foreign = httpx.get(url, headers=bearer(staff_user), timeout=30)
    assert foreign.status_code == 404
    assert foreign.headers["content-type"] == "application/problem+json"
    assert foreign.json()["code"] == "not-found"
    anonymous = httpx.get(url, timeout=30)
    assert anonymous.status_code == 401
    assert anonymous.json()["code"] == "unauthenticated"
    bad = httpx.get(url, headers={**bearer(user), "Last-Event-ID": "1.nonsense"}, timeout=30)
    assert bad.status_code == 422
    assert bad.json()["errors"][0]["loc"] == ["header", "Last-Event-ID"]
