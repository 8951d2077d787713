"""Badge latency: a mode change committed → the websocket message in a connected browser.

A real daphne process serves SF; a websocket client (aiohttp) is connected to the
session page's socket with a logged-in session cookie; this process changes the
session's model mode through the service, timing from the commit (the first
on-commit callback) to the arrival of the pushed badge, through the Redis channel
layer. Needs team mode (DATABASE_URL and REDIS_URL; taken from .sf/env if unset).
It creates a throw-away project, session and user (a viewer of the project, as the
socket requires since project roles) and deletes them afterwards; the socket sends the
page's own origin (``http://127.0.0.1:PORT``), as a browser on the page would.

Each change goes to a mode the session is not in: a new session starts in ``deep``
(``NEW_SESSION_AXES``), and a change to the mode it has changes nothing and sends
nothing (the script once waited for ever for that message: daphne's ping every 20 s
restarted aiohttp's receive timeout each time). Every wait has a deadline of its own
(the handshake, each message) and fails naming what it waited for.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from _common import ROOT, django_team_mode, parse_args, percentile, report, throwaway_repo
from _processes import start, stop

django_team_mode()

import aiohttp  # noqa: E402
from django.contrib.auth.models import User  # noqa: E402
from django.db import transaction  # noqa: E402
from django.test import Client  # noqa: E402

from agents_app.models import ProjectMembership, Role  # noqa: E402
from agents_app.services import project_create, session_change_mode, session_create  # noqa: E402
from sf_core.actors import Actor  # noqa: E402
from tests.processes import free_port  # noqa: E402

HANDSHAKE_S = 60  # a busy 2-core machine: the first connection loads the consumer
MESSAGE_S = 60  # each message, pings between them included


class NoMessage(RuntimeError):
    """The socket did not send what the benchmark waited for, in time or at all."""


def start_daphne(port: int) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port)]
    server = start(
        [*command, "sf_web.asgi:application"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120  # Django's start takes a while on a busy machine
    while time.monotonic() < deadline:
        try:
            with __import__("socket").create_connection(("127.0.0.1", port), timeout=0.2):
                return server
        except OSError:
            time.sleep(0.1)
        if server.poll() is not None:
            raise SystemExit(f"daphne exited with {server.returncode} before listening")
    stop(server)
    raise SystemExit(f"daphne did not listen on 127.0.0.1:{port} within 120 s")


def other_mode(current: str) -> str:
    """A model mode the session is not in: changing to its own mode sends nothing."""
    return "fast" if current != "fast" else "deep"


def change_and_mark(session_id: int, value: str, marks: dict[str, float]) -> None:
    """Change the model mode; record the instant the transaction committed."""
    from agents_app.models import AgentSession

    with transaction.atomic():
        transaction.on_commit(lambda: marks.__setitem__(value, time.perf_counter()))
        session = AgentSession.objects.get(pk=session_id)
        transition = session_change_mode(
            session=session,
            changes={"model_mode": value},
            reason="benchmark",
            actor=Actor.system("bench"),
        )
    if transition is None:
        raise RuntimeError(
            f"changing session {session_id}'s model mode to {value!r} changed nothing "
            f"(it was {session.model_mode!r}, or the session was busy): no message would come"
        )


async def receive_until(ws: aiohttp.ClientWebSocketResponse, needle: str, what: str) -> str:
    """The first text message holding ``needle``, within ``MESSAGE_S`` in all: the
    server's pings and other messages in between do not restart the clock."""
    try:
        async with asyncio.timeout(MESSAGE_S):
            while True:
                message = await ws.receive()
                if message.type == aiohttp.WSMsgType.TEXT:
                    if needle in message.data:
                        return str(message.data)
                elif message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED):
                    raise NoMessage(f"the socket closed ({ws.close_code}) before {what}")
                elif message.type == aiohttp.WSMsgType.ERROR:
                    raise NoMessage(f"the socket failed ({message.data!r}) before {what}")
    except TimeoutError:
        late = f"{what} did not come within {MESSAGE_S} s (a text message with {needle!r})"
        raise NoMessage(late) from None


async def connect(client: aiohttp.ClientSession, url: str, port: int, cookie: str) -> Any:
    # The page's own origin, port included: anything else is refused (sf_web/origins.py).
    headers = {"Origin": f"http://127.0.0.1:{port}", "Cookie": cookie}
    try:
        async with asyncio.timeout(HANDSHAKE_S):
            return await client.ws_connect(url, headers=headers)
    except TimeoutError:
        message = f"no answer to the websocket handshake at {url} within {HANDSHAKE_S} s"
        raise NoMessage(message) from None
    except aiohttp.WSServerHandshakeError as error:
        raise NoMessage(
            f"the websocket at {url} was refused at the handshake ({error.status}): the "
            "user's role in the project, its session cookie or the Origin header"
        ) from error


async def measure(port: int, cookie: str, session_id: int, mode: str, changes: int) -> list[float]:
    """``mode``: the session's mode before the first change."""
    latencies: list[float] = []
    url = f"ws://127.0.0.1:{port}/ws/sessions/{session_id}/"
    async with aiohttp.ClientSession() as client:
        ws = await connect(client, url, port, cookie)
        async with ws:
            await receive_until(ws, f'data-model-mode="{mode}"', "the initial render")
            for index in range(changes):
                mode = other_mode(mode)
                marks: dict[str, float] = {}
                await asyncio.to_thread(change_and_mark, session_id, mode, marks)
                what = f"the badge of change {index + 1} (to {mode})"
                await receive_until(ws, f'data-model-mode="{mode}"', what)
                latencies.append((time.perf_counter() - marks[mode]) * 1000)
    return latencies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--changes", type=int, default=200)
    args = parse_args(parser, smoke={"changes": 3})
    tag = uuid.uuid4().hex[:8]
    with tempfile.TemporaryDirectory() as tmp:
        project = project_create(name=f"bench-{tag}", repo_path=str(throwaway_repo(Path(tmp))))
        session = session_create(project=project)
        user = User.objects.create_user(f"bench-{tag}", password=uuid.uuid4().hex)
        ProjectMembership.objects.create(project=project, user=user, role=Role.VIEWER)
        client = Client()
        client.force_login(user)
        cookie = f"sessionid={client.cookies['sessionid'].value}"
        port = free_port()
        server = start_daphne(port)
        try:
            measured = measure(port, cookie, session.pk, session.model_mode, args.changes)
            latencies = asyncio.run(measured)
        finally:
            stop(server)
            project.delete()
            user.delete()
    median, p95 = statistics.median(latencies), percentile(latencies, 0.95)
    worst = max(latencies)
    print(f"{len(latencies)} changes: median {median:.1f} ms, p95 {p95:.1f} ms, max {worst:.1f} ms")
    report({"badge_median_ms": round(median, 2), "badge_p95_ms": round(p95, 2)})


if __name__ == "__main__":
    main()
