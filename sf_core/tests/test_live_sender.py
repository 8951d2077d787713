"""The live sender under a flood: bounded connections, nothing raised, every message
accounted for (sent, coalesced, dropped or failed)."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from channels.layers import channel_layers
from channels_redis.core import RedisChannelLayer
from django.conf import settings as django_settings

from sf_core.live import _Sender

pytestmark = pytest.mark.skipif(django_settings.REDIS_URL is None, reason="needs Redis (team mode)")


@pytest.fixture
def tight_pool(settings: Any) -> Iterator[dict[str, Any]]:
    """The Redis channel layer with a pool of 2 connections (redis-py raises
    ``MaxConnectionsError`` for a third), on a prefix of its own."""
    config = {
        "hosts": [{"address": settings.REDIS_URL, "max_connections": 2}],
        "prefix": f"sf-test-live-{uuid.uuid4().hex[:8]}",
        "capacity": 100_000,
        "expiry": 30,
    }
    settings.CHANNEL_LAYERS = {
        "default": {"BACKEND": "channels_redis.core.RedisChannelLayer", "CONFIG": config}
    }
    channel_layers.backends.clear()
    yield config
    channel_layers.backends.clear()


class Listener:
    """A channel that joined ``group``; counts what reaches it (its own loop)."""

    def __init__(self, group: str, config: dict[str, Any]) -> None:
        self.group = group
        self.loop = asyncio.new_event_loop()
        self.layer = RedisChannelLayer(**config)  # its own pools: closed with this loop
        self.channel = self.loop.run_until_complete(self._join())

    async def _join(self) -> str:
        channel = await self.layer.new_channel()
        await self.layer.group_add(self.group, channel)
        return str(channel)

    def count(self) -> list[dict[str, Any]]:
        async def drain() -> list[dict[str, Any]]:
            got = []
            while True:
                try:
                    got.append(await asyncio.wait_for(self.layer.receive(self.channel), 1.0))
                except TimeoutError:
                    return got

        try:
            return self.loop.run_until_complete(drain())
        finally:
            self.loop.run_until_complete(self.layer.flush())
            self.loop.close()


@pytest.fixture(name="sender")
def own_sender() -> Iterator[_Sender]:
    """A sender of its own (not the process's), closed with its connections after."""
    own = _Sender()
    yield own
    own.close()


def test_a_flood_within_the_pool_is_sent_without_an_error(
    tight_pool: dict[str, Any], settings: Any, sender: _Sender, caplog: pytest.LogCaptureFixture
) -> None:
    settings.SF_LIVE_LANES = 2  # two lanes: never more than the pool's 2 connections
    settings.SF_LIVE_QUEUE = 100_000
    listener = Listener("flood.watched", tight_pool)
    with caplog.at_level(logging.WARNING, logger="sf.live"):
        for n in range(300):
            sender.send("flood.watched", {"type": "x.changed", "n": n})
        for n in range(2000):  # other groups' traffic in the same lanes, at once
            sender.send(f"flood.other.{n % 50}", {"type": "x.changed", "n": n})
        sender.flush(timeout=60)
    stats = sender.stats()
    assert stats == {"sent": 2300, "coalesced": 0, "dropped": 0, "failed": 0, "pending": 0}
    assert not [r for r in caplog.records if r.name == "sf.live"]
    messages = listener.count()
    # One group, one lane: its messages arrive all, and in the order they were sent.
    assert [m["n"] for m in messages] == list(range(300))


def test_identical_waiting_messages_are_sent_once(
    tight_pool: dict[str, Any], settings: Any, sender: _Sender
) -> None:
    settings.SF_LIVE_LANES = 1
    for _ in range(500):
        sender.send("flood.same", {"type": "tasks.changed"})
    sender.flush(timeout=30)
    stats = sender.stats()
    assert stats["failed"] == 0
    assert stats["dropped"] == 0
    assert stats["sent"] + stats["coalesced"] == 500
    assert stats["coalesced"] > 0  # the first was being sent while the rest waited


def test_a_full_lane_drops_its_oldest_and_counts_it(
    tight_pool: dict[str, Any], settings: Any, sender: _Sender, caplog: pytest.LogCaptureFixture
) -> None:
    settings.SF_LIVE_LANES = 1
    settings.SF_LIVE_QUEUE = 10
    listener = Listener("flood.small", tight_pool)
    with caplog.at_level(logging.WARNING, logger="sf.live"):
        for n in range(1000):
            sender.send("flood.small", {"type": "x.changed", "n": n})
        sender.flush(timeout=30)
    stats = sender.stats()
    assert stats["failed"] == 0
    assert stats["dropped"] > 0
    assert stats["sent"] + stats["dropped"] == 1000
    messages = listener.count()
    assert len(messages) == stats["sent"]
    assert messages[-1]["n"] == 999  # the newest survives a full lane
    assert any("oldest message was dropped" in r.getMessage() for r in caplog.records)


def test_more_lanes_than_connections_count_failures_and_raise_nothing(
    tight_pool: dict[str, Any], settings: Any, sender: _Sender
) -> None:
    """Misconfigured (8 lanes, a pool of 2): redis-py refuses some sends with
    ``MaxConnectionsError``; they are counted as failed, the sender keeps going."""
    settings.SF_LIVE_LANES = 8
    settings.SF_LIVE_QUEUE = 100_000
    for n in range(2000):
        sender.send(f"flood.lane.{n % 64}", {"type": "x.changed", "n": n})
    sender.flush(timeout=60)
    stats = sender.stats()
    assert stats["sent"] + stats["failed"] == 2000
    assert stats["failed"] > 0
    sender.send("flood.after", {"type": "x.changed"})  # still sending afterwards
    sender.flush(timeout=10)
    assert sender.stats()["sent"] + sender.stats()["failed"] == 2001
