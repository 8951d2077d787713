"""LivePartialConsumer: the refresh that reaches pages no event can reach."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from channels.layers import channel_layers
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import AnonymousUser

from sf_core.consumers import LivePartialConsumer

pytestmark = pytest.mark.asyncio
SHOWN = {"text": "one"}


class Echo(LivePartialConsumer):
    """Renders whatever SHOWN holds: a change no group event announces."""

    def resolve_groups(self) -> list[str]:
        return ["echo"]

    def render(self) -> str:
        return f"<p id='echo'>{SHOWN['text']}</p>"


class Logged:
    """A user that is logged in, without the database."""

    is_authenticated = True


def communicator(user: Any = None) -> WebsocketCommunicator:
    application = Echo.as_asgi()

    async def with_user(scope: dict[str, Any], receive: Any, send: Any) -> None:
        await application({**scope, "user": user or Logged()}, receive, send)

    return WebsocketCommunicator(with_user, "/ws/echo/")


@pytest.fixture
def fast_refresh(settings: Any) -> Iterator[None]:
    settings.SF_STATUS_REFRESH = timedelta(milliseconds=50)
    SHOWN["text"] = "one"
    yield
    channel_layers.backends.clear()


@pytest.fixture
def in_memory_layer(settings: Any, fast_refresh: None) -> None:
    """Embedded mode: the channel layer lives in this process only."""
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    channel_layers.backends.clear()


async def test_embedded_pages_see_a_change_no_event_announced(in_memory_layer: None) -> None:
    ws = communicator()
    connected, _ = await ws.connect()
    assert connected
    assert await ws.receive_from() == "<p id='echo'>one</p>"
    assert await ws.receive_nothing(timeout=0.3)  # unchanged: nothing is sent again
    SHOWN["text"] = "two"  # e.g. the CLI, another process, finished a unit
    assert await ws.receive_from(timeout=2) == "<p id='echo'>two</p>"
    await ws.disconnect()


async def test_with_redis_a_page_waits_for_events(fast_refresh: None) -> None:
    ws = communicator()
    connected, _ = await ws.connect()
    assert connected
    assert await ws.receive_from() == "<p id='echo'>one</p>"
    SHOWN["text"] = "two"
    assert await ws.receive_nothing(timeout=0.3)  # the Redis layer hears every process
    await ws.disconnect()


async def test_an_anonymous_visitor_is_refused(in_memory_layer: None) -> None:
    ws = communicator(AnonymousUser())
    connected, code = await ws.connect()
    assert (connected, code) == (False, 4401)
