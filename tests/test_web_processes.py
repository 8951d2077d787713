"""More than one web process: two of SF's web servers (``scripts/web.sh``, as
scripts/run.sh and compose.yaml run one per core) on one database and one Redis channel
layer serve the same board, and a change made through one reaches a browser whose
websocket is held by the other."""

from __future__ import annotations

import asyncio
import secrets
import urllib.request
from pathlib import Path

import aiohttp
import pytest
from django.test import Client

from tasks_app.models import Task
from tests.access_world import task_in, world_make
from tests.processes import WebServerProcess

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def get(url: str, cookie: str) -> str:
    request = urllib.request.Request(url, headers={"Cookie": cookie})
    with urllib.request.urlopen(request, timeout=60) as response:
        assert response.status == 200
        assert response.geturl() == url, "redirected: the session cookie was not accepted"
        return str(response.read().decode())


def post(url: str, cookie: str) -> int:
    token = secrets.token_hex(16)  # Django accepts a token of its form sent both ways
    headers = {"Cookie": f"{cookie}; csrftoken={token}", "X-CSRFToken": token, "HX-Request": "true"}
    request = urllib.request.Request(url, data=b"", headers=headers, method="POST")
    with urllib.request.urlopen(request, timeout=60) as response:
        return int(response.status)


async def watch_until(
    url: str, origin: str, cookie: str, posted: asyncio.Event, needle: str
) -> str:
    headers = {"Origin": origin, "Cookie": cookie}
    async with aiohttp.ClientSession() as client, client.ws_connect(url, headers=headers) as ws:
        first = await ws.receive_str(timeout=60)
        assert 'id="task-board"' in first
        posted.set()
        while True:  # until the change arrives; the test's deadline bounds it
            html = await ws.receive_str(timeout=60)
            if needle in html:
                return html


def test_a_change_through_one_process_reaches_a_browser_on_the_other(tmp_path: Path) -> None:
    world = world_make(tmp_path, "admin")
    session, plan = task_in(world, "failed")
    task = Task.objects.get(plan=plan)
    client = Client()
    client.force_login(world.bob)
    cookie = f"sessionid={client.cookies['sessionid'].value}"
    first, second = WebServerProcess(), WebServerProcess()
    servers = [first.start(), second.start()]
    try:
        board = f"/tasks/?session={session.pk}"
        for server in servers:  # both serve the board, from the same database
            assert f'id="task-{task.pk}"' in get(server.url + board, cookie)

        async def scenario() -> str:
            posted = asyncio.Event()
            ws_url = f"ws://127.0.0.1:{second.port}/ws{board}"
            watching = asyncio.create_task(
                watch_until(
                    ws_url,
                    second.url,
                    cookie,
                    posted,
                    f'id="task-{task.pk}" data-task="{task.key}" data-status="cancelled"',
                )
            )
            await asyncio.wait_for(posted.wait(), 90)
            status = await asyncio.to_thread(
                post, f"{first.url}/tasks/{task.pk}/cancel?session={session.pk}", cookie
            )
            assert status == 200
            return await asyncio.wait_for(watching, 90)

        html = asyncio.run(scenario())
    finally:
        for server in servers:
            server.stop()
    task.refresh_from_db()
    assert task.status == "cancelled"
    assert 'id="task-board"' not in html, "the change alone, not the whole board"
