"""The dashboard's websockets (system status, session table) through the real Redis
channel layer."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings

from agents_app.models import AgentSession, Project
from agents_app.services import session_set_paused
from conftest import websocket
from dashboard_app.tests.sessions_data import new_session, rows, work
from sf_core.actors import Actor
from sf_core.consumers import CLOSE_UNAUTHENTICATED
from tasks_app.engine.workers import worker_register, worker_stop
from tasks_app.lifecycle import task_transition
from tasks_app.models import Task

pytestmark = [pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]


async def test_the_channel_layer_is_redis() -> None:
    backend = settings.CHANNEL_LAYERS["default"]["BACKEND"]
    assert backend == "channels_redis.pubsub.RedisPubSubChannelLayer"


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


async def receive_until(communicator: WebsocketCommunicator, needle: str) -> str:
    for _ in range(10):
        html = await communicator.receive_from(timeout=5)
        if needle in html:
            return html
    raise AssertionError(f"never received {needle!r}")


def _two_sessions(project: Project) -> tuple[AgentSession, AgentSession]:
    alpha, beta = new_session(project, "alpha"), new_session(project, "beta")
    work(alpha, "review", "todo")
    work(beta, "review")
    return alpha, beta


def _finish_review(session: AgentSession) -> None:
    task = Task.objects.select_related("plan").get(plan__session=session, key="a")
    task_transition(task=task, to="done", reason="merged", actor=Actor.system("t"))


async def test_a_task_moving_pushes_the_session_table_with_its_filters_kept(
    session_cookie: bytes, project: Project
) -> None:
    alpha, beta = await database_sync_to_async(_two_sessions)(project)
    communicator = websocket("/ws/sessions/?q=alph", cookie=session_cookie)
    connected, _ = await communicator.connect()
    try:
        assert connected
        first = rows(await communicator.receive_from(timeout=5))
        assert set(first) == {alpha.pk}
        assert 'data-progress="0/2"' in first[alpha.pk][1]

        await database_sync_to_async(_finish_review)(beta)  # not shown, still pushed
        assert set(rows(await communicator.receive_from(timeout=5))) == {alpha.pk}

        await database_sync_to_async(_finish_review)(alpha)
        html = await receive_until(communicator, 'data-progress="1/2"')
        assert 'id="session-table"' in html
        assert set(rows(html)) == {alpha.pk}
    finally:
        await communicator.disconnect()


async def test_a_session_pausing_pushes_its_new_outcome(
    session_cookie: bytes, agent_session: AgentSession
) -> None:
    communicator = websocket("/ws/sessions/", cookie=session_cookie)
    connected, _ = await communicator.connect()
    try:
        assert connected
        assert rows(await communicator.receive_from(timeout=5))[agent_session.pk][0] == "active"
        await database_sync_to_async(session_set_paused)(
            session=agent_session, paused=True, reason="tea", actor=Actor.system("t")
        )
        html = await receive_until(communicator, 'data-outcome="paused"')
        assert rows(html)[agent_session.pk][0] == "paused"
    finally:
        await communicator.disconnect()


async def test_the_session_table_refuses_anonymous_users() -> None:
    communicator = websocket("/ws/sessions/")
    connected, code = await communicator.connect()
    assert not connected
    assert code == CLOSE_UNAUTHENTICATED
    await communicator.disconnect()
