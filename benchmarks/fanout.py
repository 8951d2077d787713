"""Live fan-out: 200 browsers on one task board while units run.

SF's web server (``scripts/web.sh``: uvicorn, a process per core, on the Redis
channel layer) serves the board of a session whose
tasks are being run by 2 Celery worker processes (solo pool; the replayed model and
``true`` as the verify command, as in ``dispatch.py``). 200 websocket clients (aiohttp,
each with a logged-in session cookie) hold the board's socket open, as 200 browsers
on its first page would. Every transition the units make (todo → in_progress →
verifying → review → done) is re-rendered and pushed to every client.

``fanout_p95_ms``: for each transition of a task on the page, from its commit (the
``TaskTransition`` row's time, written in the committing transaction) to the first
message at each client that shows the task in that state or a later one; p95 over
every (transition, client) of a run, the median over ``--runs`` runs. Target: ≤ 150
ms, the badge's target, now under load. Also: the median, ``missed`` (transitions a
client never saw), messages a client received, distinct renders. Needs team mode
(.sf/env).
"""

from __future__ import annotations

import argparse
import asyncio
import re
import statistics
import subprocess
import tempfile
import time
import uuid
from collections import defaultdict
from pathlib import Path

from _common import django_team_mode, parse_args, percentile, report

django_team_mode()

import aiohttp  # noqa: E402
from _load import WebServer  # noqa: E402
from dispatch import setup, start_workers, wait_for_plan  # noqa: E402
from django.conf import settings  # noqa: E402
from django.contrib.auth.models import User  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import override_settings  # noqa: E402

from agents_app.models import AgentSession  # noqa: E402
from tasks_app.engine.dispatch import dispatch  # noqa: E402
from tasks_app.models import Plan, TaskTransition  # noqa: E402

# Sockets opened at once. daphne drops a websocket whose handshake takes over 5 s, and
# each connect takes the thread that does the server's database work a few times.
CONNECTING = 5
ROW = re.compile(r'data-task="([^"]+)" data-status="([^"]+)"')


class Received:
    """What the clients received: each client's (time, message) list, every distinct
    message kept once (all 200 clients get the same HTML for one render)."""

    def __init__(self) -> None:
        self.by_client: list[list[tuple[float, int]]] = []
        self.texts: dict[int, str] = {}
        self.bytes = 0
        self.retries = 0  # connects tried again

    def client(self) -> list[tuple[float, int]]:
        self.by_client.append([])
        return self.by_client[-1]

    def add(self, log: list[tuple[float, int]], text: str) -> None:
        key = hash(text)
        self.texts.setdefault(key, text)
        self.bytes += len(text)
        log.append((time.time(), key))


async def listen(ws: aiohttp.ClientWebSocketResponse, log: list, received: Received) -> None:
    async for message in ws:
        if message.type == aiohttp.WSMsgType.TEXT:
            received.add(log, message.data)


async def connect(
    session: aiohttp.ClientSession, url: str, headers: dict[str, str], received: Received
) -> tuple[aiohttp.ClientWebSocketResponse, asyncio.Task[None]]:
    """One client, its first message (the board as it is now) received; a connect the
    server dropped (its handshake took over daphne's 5 s) is tried again, and counted."""
    for attempt in range(3):
        try:
            ws = await session.ws_connect(url, headers=headers, max_msg_size=0)
            first = await ws.receive_str(timeout=60)
            break
        except (aiohttp.ClientError, TypeError):  # reset, or a close frame for the text
            received.retries += 1
            if attempt == 2:
                raise
    log = received.client()
    received.add(log, first)
    return ws, asyncio.create_task(listen(ws, log, received))


async def watch(url: str, headers: dict[str, str], clients: int, run: object) -> Received:
    """Connect ``clients`` sockets (a few at a time, as browsers arrive), then ``run()``
    in a thread, then listen two seconds more and close."""
    received = Received()
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector) as session:
        sockets = []
        for start in range(0, clients, CONNECTING):
            batch = [
                connect(session, url, headers, received)
                for _ in range(start, min(clients, start + CONNECTING))
            ]
            sockets += await asyncio.gather(*batch)
        print(f"{len(sockets)} clients connected")
        assert callable(run)
        await asyncio.to_thread(run)
        await asyncio.sleep(2)
        for ws, listener in sockets:
            await ws.close()
            listener.cancel()
    return received


def latencies(received: Received, plan: Plan, since: float) -> tuple[list[float], int]:
    """Per (transition, client): commit → the first message showing that state or a
    later one of the same task. Only tasks the page shows are counted."""
    shown = {key: dict(ROW.findall(text)) for key, text in received.texts.items()}
    on_page = set().union(*(rows.keys() for rows in shown.values()))
    moves: dict[str, list[tuple[float, str]]] = defaultdict(list)
    rows = TaskTransition.objects.filter(task__plan=plan).order_by("created_at", "pk")
    for key, to, at in rows.values_list("task__key", "to_status", "created_at"):
        if key in on_page and at.timestamp() >= since:
            moves[key].append((at.timestamp(), to))
    found, missed = [], 0
    for log in received.by_client:
        for key, sequence in moves.items():
            for index, (committed, _) in enumerate(sequence):
                later = {status for _, status in sequence[index:]}
                seen = next(
                    (at for at, text in log if at >= committed and shown[text].get(key) in later),
                    None,
                )
                if seen is None:
                    missed += 1
                else:
                    found.append((seen - committed) * 1000)
    return found, missed


def stop_workers(workers: list[subprocess.Popen[bytes]]) -> None:
    for worker in workers:
        worker.terminate()
    for worker in workers:
        try:
            worker.wait(timeout=30)
        except subprocess.TimeoutExpired:  # still in a unit: warm shutdown waits
            worker.kill()
            worker.wait()


def measure(args: argparse.Namespace) -> tuple[Received, list[float], int, float]:
    """Units through workers while the clients watch; what the clients received."""
    with tempfile.TemporaryDirectory() as tmp:
        # Driven inline until the clock starts: the workers' sweep dispatches a worker-
        # driven session on its own, and ran the smoke's two tasks before the clients
        # watched (no transition to measure: an empty median in 2 of 7 smoke runs).
        project, session, plan = setup(Path(tmp), "fanout", args.tasks, driver="inline")
        user = User.objects.create_superuser(f"bench-{uuid.uuid4().hex[:8]}", password=None)
        browser = Client(HTTP_HOST="127.0.0.1")
        browser.force_login(user)
        cookie = f"sessionid={browser.cookies['sessionid'].value}"
        queue = f"bench-{uuid.uuid4().hex[:8]}"
        workers = start_workers(queue, args.workers)
        server = WebServer()
        try:
            server.wait_ready(f"/tasks/?session={session.pk}", cookie)
            time.sleep(6)  # the workers import everything before the clock starts
            url = f"ws://127.0.0.1:{server.port}/ws/tasks/?session={session.pk}"
            headers = {"Cookie": cookie, "Origin": server.url}

            def run_units() -> None:
                AgentSession.objects.filter(pk=session.pk).update(driver="workers")
                with override_settings(CELERY_TASK_DEFAULT_QUEUE=queue):
                    dispatch(session_id=session.pk)
                wait_for_plan(plan, timeout_s=600)

            started = time.time()
            received = asyncio.run(watch(url, headers, args.clients, run_units))
            elapsed = time.time() - started
            found, missed = latencies(received, plan, started)
        finally:
            server.stop()
            stop_workers(workers)
            project.delete()
            user.delete()
    return received, found, missed, elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--tasks", type=int, default=40)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--runs", type=int, default=2)
    args = parse_args(parser, smoke={"clients": 3, "tasks": 2, "workers": 1, "runs": 1})
    assert not settings.CELERY_TASK_ALWAYS_EAGER, "needs REDIS_URL (team mode)"
    runs = []
    for run in range(args.runs):
        received, found, missed, elapsed = measure(args)
        if not found:  # say what was seen rather than fail on an empty median
            raise SystemExit(
                f"no (transition, client) pair measured in {elapsed:.0f} s: {missed} missed "
                f"(no client saw the state), {len(received.texts)} distinct messages, "
                f"{[len(log) for log in received.by_client]} messages a client"
            )
        messages = sum(len(log) for log in received.by_client) / len(received.by_client)
        figures = {
            "median": statistics.median(found),
            "p95": percentile(found, 0.95),
            "max": max(found),
            "missed": missed,
            "renders": len(received.texts),
            "kb_per_client": received.bytes / len(received.by_client) / 1000,
            "retries": received.retries,
        }
        print(
            f"run {run + 1}: {args.clients} clients, {args.tasks} tasks through "
            f"{args.workers} workers in {elapsed:.0f} s; {len(found)} (transition, client) "
            f"pairs, {missed} missed; commit → client median {figures['median']:.1f} ms, "
            f"p95 {figures['p95']:.1f} ms, max {figures['max']:.1f} ms; {messages:.0f} "
            f"messages a client, {figures['renders']} distinct renders"
        )
        runs.append(figures)

    def median(key: str) -> float:
        return round(statistics.median(run[key] for run in runs), 1)

    report(
        {
            "clients": args.clients,
            "fanout_median_ms": median("median"),
            "fanout_p95_ms": median("p95"),
            "fanout_max_ms": median("max"),
            "missed": sum(int(run["missed"]) for run in runs),
            "distinct_renders": median("renders"),
            "kb_per_client": median("kb_per_client"),
            "connect_retries": sum(int(run["retries"]) for run in runs),
            "runs": args.runs,
        }
    )


if __name__ == "__main__":
    main()
