"""The live session page through the Redis channel layer."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async

from agents_app.models import AgentSession
from agents_app.services import command_run
from conftest import websocket
from sf_core.actors import Actor
from sf_core.consumers import CLOSE_FORBIDDEN, CLOSE_UNAUTHENTICATED

pytestmark = [pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]


async def test_a_change_anywhere_pushes_the_badge_and_timeline(
    session_cookie: bytes, agent_session: AgentSession
) -> None:
    communicator = websocket(f"/ws/sessions/{agent_session.pk}/", cookie=session_cookie)
    connected, _ = await communicator.connect()
    try:
        assert connected
        first = await communicator.receive_from(timeout=5)
        assert 'id="mode-badge"' in first
        assert 'data-work-mode="chat"' in first

        await database_sync_to_async(command_run)(
            session=agent_session, text="/mode build --autonomous", actor=Actor.system("cli")
        )
        html = await communicator.receive_from(timeout=5)
        assert 'data-work-mode="build"' in html
        assert 'data-run-control="autonomous"' in html
        assert 'id="transition-timeline"' in html
        assert "work_mode chat → build" in html
        assert 'class="badge-part c-success pulse"' in html
    finally:
        await communicator.disconnect()


async def test_anonymous_users_are_refused(agent_session: AgentSession) -> None:
    communicator = websocket(f"/ws/sessions/{agent_session.pk}/")
    connected, code = await communicator.connect()
    assert not connected
    assert code == CLOSE_UNAUTHENTICATED
    await communicator.disconnect()


async def test_a_foreign_origin_is_refused(
    session_cookie: bytes, agent_session: AgentSession
) -> None:
    communicator = websocket(
        f"/ws/sessions/{agent_session.pk}/", cookie=session_cookie, origin=b"https://evil.example"
    )
    connected, _ = await communicator.connect()
    assert not connected
    await communicator.disconnect()


async def test_an_unknown_session_is_refused(session_cookie: bytes) -> None:
    communicator = websocket("/ws/sessions/999999/", cookie=session_cookie)
    connected, code = await communicator.connect()
    assert not connected
    assert code == CLOSE_FORBIDDEN
    await communicator.disconnect()
