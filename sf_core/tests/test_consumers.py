"""LivePartialConsumer: the refresh that reaches pages no event can reach."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from channels.layers import channel_layers
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import AnonymousUser

from sf_core.consumers import LivePartialConsumer, SharedRenders
from sf_core.live import BROADCAST_ID

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


def communicator(
    user: Any = None, consumer: type[LivePartialConsumer] = Echo
) -> WebsocketCommunicator:
    application = consumer.as_asgi()

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


class Shared(Echo):
    """A partial that is the same for everyone: its render is shared."""

    renders = 0

    def resolve_groups(self) -> list[str]:
        return ["shared-echo"]

    def render_key(self) -> str:
        return "shared-echo"

    def render(self) -> str:
        Shared.renders += 1
        return f"<p id='echo'>{SHOWN['text']}</p>"

    async def echo_changed(self, event: dict[str, Any]) -> None:
        await self.push()


async def test_browsers_on_one_partial_share_one_render_per_message(
    fast_refresh: None,
) -> None:
    browsers = [communicator(consumer=Shared) for _ in range(5)]
    for ws in browsers:
        connected, _ = await ws.connect()
        assert connected
        assert await ws.receive_from() == "<p id='echo'>one</p>"
    layer = channel_layers["default"]
    for number, text in ((1, "two"), (2, "three")):
        SHOWN["text"] = text
        before = Shared.renders
        await layer.group_send("shared-echo", {"type": "echo.changed", BROADCAST_ID: f"m{number}"})
        assert [await ws.receive_from(timeout=5) for ws in browsers] == [
            f"<p id='echo'>{text}</p>"
        ] * 5
        assert Shared.renders == before + 1  # once for the five browsers
    for ws in browsers:
        await ws.disconnect()


async def test_a_render_begun_before_a_message_arrived_is_not_reused_for_it() -> None:
    """It may have read the database before the change the message announces; the
    render waiting behind it is shared by every message and browser that comes."""
    renders, calls = SharedRenders(), []
    begun, release = threading.Event(), threading.Event()

    def render() -> str:  # runs on the thread that does database work
        calls.append(len(calls) + 1)
        begun.set()
        release.wait(timeout=10)
        return f"render {len(calls)}"

    first = asyncio.ensure_future(renders.render("k", renders.since({BROADCAST_ID: "a"}), render))
    assert await asyncio.to_thread(begun.wait, 10)  # that render has begun reading
    same = renders.render("k", renders.since({BROADCAST_ID: "a"}), render)  # "a" again
    later = renders.render("k", renders.since({BROADCAST_ID: "b"}), render)  # a new message
    after = renders.render("k", renders.since({BROADCAST_ID: "c"}), render)  # and another
    waiting = asyncio.gather(same, later, after)
    await asyncio.sleep(0.05)
    assert calls == [1]  # "b" and "c" wait for one render behind the first
    release.set()
    assert await first == "render 1"
    assert await waiting == ["render 1", "render 2", "render 2"]
    assert calls == [1, 2]
