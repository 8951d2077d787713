"""Badge latency: a mode change committed → the websocket message in a connected browser.

A real daphne process serves SF; a websocket client (aiohttp) is connected to the
session page's socket with a logged-in session cookie; this process changes the
session's model mode through the service, timing from the commit (the first
on-commit callback) to the arrival of the pushed badge, through the Redis channel
layer. Needs team mode (DATABASE_URL and REDIS_URL; taken from .sf/env if unset).
It creates a throw-away project, session and user (a viewer of the project, as the
socket requires since project roles) and deletes them afterwards; the socket sends the
page's own origin (``http://127.0.0.1:PORT``), as a browser on the page would.
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

from _common import ROOT, django_team_mode, parse_args, percentile, report, throwaway_repo

django_team_mode()

import aiohttp  # noqa: E402
from django.contrib.auth.models import User  # noqa: E402
from django.db import transaction  # noqa: E402
from django.test import Client  # noqa: E402

from agents_app.models import ProjectMembership, Role  # noqa: E402
from agents_app.services import project_create, session_change_mode, session_create  # noqa: E402
from sf_core.actors import Actor  # noqa: E402
from tests.processes import free_port  # noqa: E402


def start_daphne(port: int) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port)]
    server = subprocess.Popen(
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
    server.kill()
    raise SystemExit("daphne did not listen within 120 s")


def change_and_mark(session_id: int, value: str, marks: dict[str, float]) -> None:
    """Change the model mode; record the instant the transaction committed."""
    from agents_app.models import AgentSession

    with transaction.atomic():
        transaction.on_commit(lambda: marks.__setitem__(value, time.perf_counter()))
        session = AgentSession.objects.get(pk=session_id)
        session_change_mode(
            session=session,
            changes={"model_mode": value},
            reason="benchmark",
            actor=Actor.system("bench"),
        )


async def measure(port: int, cookie: str, session_id: int, changes: int) -> list[float]:
    latencies: list[float] = []
    url = f"ws://127.0.0.1:{port}/ws/sessions/{session_id}/"
    # The page's own origin, port included: anything else is refused (sf_web/origins.py).
    headers = {"Origin": f"http://127.0.0.1:{port}", "Cookie": cookie}
    async with aiohttp.ClientSession() as client, client.ws_connect(url, headers=headers) as ws:
        await ws.receive_str(timeout=60)  # the initial render
        for index in range(changes):
            value = "deep" if index % 2 == 0 else "fast"
            marks: dict[str, float] = {}
            await asyncio.to_thread(change_and_mark, session_id, value, marks)
            while True:
                html = await ws.receive_str(timeout=60)
                if f'data-model-mode="{value}"' in html:
                    received = time.perf_counter()
                    break
            latencies.append((received - marks[value]) * 1000)
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
            latencies = asyncio.run(measure(port, cookie, session.pk, args.changes))
        finally:
            server.terminate()
            server.wait(timeout=20)
            project.delete()
            user.delete()
    median, p95 = statistics.median(latencies), percentile(latencies, 0.95)
    worst = max(latencies)
    print(f"{len(latencies)} changes: median {median:.1f} ms, p95 {p95:.1f} ms, max {worst:.1f} ms")
    report({"badge_median_ms": round(median, 2), "badge_p95_ms": round(p95, 2)})


if __name__ == "__main__":
    main()
