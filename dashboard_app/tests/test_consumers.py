"""The system-status websocket, through the real Redis channel layer."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async
from django.conf import settings

from conftest import websocket
from sf_core.consumers import CLOSE_UNAUTHENTICATED
from tasks_app.engine.workers import worker_register, worker_stop

pytestmark = [pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]


async def test_the_channel_layer_is_redis() -> None:
    assert settings.CHANNEL_LAYERS["default"]["BACKEND"] == "channels_redis.core.RedisChannelLayer"


async def test_a_logged_in_user_gets_the_status_at_once(session_cookie: bytes) -> None:
    communicator = websocket("/ws/status/", cookie=session_cookie)
    connected, _ = await communicator.connect()
    try:
        assert connected
        html = await communicator.receive_from(timeout=5)
        assert 'id="system-status"' in html
        assert "PostgreSQL" in html
        assert "sf_native" in html
    finally:
        await communicator.disconnect()


async def test_a_worker_starting_and_stopping_is_pushed_through_redis(
    session_cookie: bytes,
) -> None:
    communicator = websocket("/ws/status/", cookie=session_cookie)
    connected, _ = await communicator.connect()
    try:
        assert connected
        await communicator.receive_from(timeout=5)  # the initial render

        await database_sync_to_async(worker_register)(
            hostname="w1@test", pid=4242, concurrency=2, queues="sf"
        )
        html = await communicator.receive_from(timeout=5)
        assert 'data-worker="w1@test" data-online="true"' in html
        assert 'data-workers-online="1"' in html

        await database_sync_to_async(worker_stop)(hostname="w1@test")
        html = await communicator.receive_from(timeout=5)
        assert 'data-worker="w1@test" data-online="false"' in html
        assert 'data-workers-online="0"' in html
    finally:
        await communicator.disconnect()


async def test_an_anonymous_user_is_refused() -> None:
    communicator = websocket("/ws/status/")
    connected, code = await communicator.connect()
    assert not connected
    assert code == CLOSE_UNAUTHENTICATED
    await communicator.disconnect()


async def test_a_foreign_origin_is_refused(session_cookie: bytes) -> None:
    communicator = websocket("/ws/status/", cookie=session_cookie, origin=b"http://evil.example")
    connected, _ = await communicator.connect()
    assert not connected
    await communicator.disconnect()


async def test_a_missing_origin_is_refused(session_cookie: bytes) -> None:
    communicator = websocket("/ws/status/", cookie=session_cookie, origin=None)
    connected, _ = await communicator.connect()
    assert not connected
    await communicator.disconnect()
