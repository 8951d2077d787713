"""The permission matrix over websockets: a subscription to a session, its plans, its
board or a unit is refused (closed with 4403) unless the user may view the project."""

from __future__ import annotations

from pathlib import Path

import pytest
from channels.db import database_sync_to_async
from django.test import Client

from conftest import websocket
from sf_core.consumers import CLOSE_FORBIDDEN
from tasks_app.models import Unit
from tests.access_world import ROLES, allowed, task_in, world_make

pytestmark = [pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]


def _world_with_a_unit(tmp_path: Path, role: str | None) -> tuple[list[str], bytes]:
    world = world_make(tmp_path, role)
    session, plan = task_in(world, "review")
    unit = Unit.objects.get(task__plan=plan)
    client = Client()
    client.force_login(world.bob)
    cookie = f"sessionid={client.cookies['sessionid'].value}".encode()
    paths = [
        f"/ws/sessions/{session.pk}/",
        f"/ws/sessions/{session.pk}/plans/",
        f"/ws/tasks/?session={session.pk}",
        f"/ws/units/{unit.pk}/",
    ]
    return paths, cookie


@pytest.mark.parametrize("role", ROLES)
async def test_subscribing(tmp_path: Path, role: str | None) -> None:
    paths, cookie = await database_sync_to_async(_world_with_a_unit)(tmp_path, role)
    for path in paths:
        communicator = websocket(path, cookie=cookie)
        connected, code = await communicator.connect()
        try:
            if allowed(role, "view"):
                assert connected, path
                assert await communicator.receive_from(timeout=5)
            else:
                assert not connected, path
                assert code == CLOSE_FORBIDDEN, path
        finally:
            await communicator.disconnect()


@pytest.mark.parametrize("role", [None, "viewer"])
async def test_the_dashboard_table_and_board_show_only_visible_sessions(
    tmp_path: Path, role: str | None
) -> None:
    paths, cookie = await database_sync_to_async(_world_with_a_unit)(tmp_path, role)
    session_path = paths[0]
    for path in ("/ws/sessions/", "/ws/tasks/"):
        communicator = websocket(path, cookie=cookie)
        connected, _ = await communicator.connect()
        try:
            assert connected
            html = await communicator.receive_from(timeout=5)
            shown = f'href="{session_path.removeprefix("/ws")}"' in html or "hello" in html
            assert shown == allowed(role, "view"), (path, html[:400])
        finally:
            await communicator.disconnect()
