"""A session's live events as server-sent events (``text/event-stream``).

One SSE message per event of headless's stream-json schema (``tasks_app/features/headless/
events.py``), its JSON as ``data:`` and, for every event but heartbeats, the resume
point after it as ``id:`` (``tasks_app/features/headless/watch.py``). The stream ends after the
``result`` event once the session has finished, and after ``SF_API_EVENTS_MAX_AGE``
otherwise (a client reconnects with ``Last-Event-ID`` and misses nothing).

Served by daphne on its event loop, with no thread and no database connection held
per client: each look at the database is one call on the loop's shared executor
that closes or recycles its connection (``close_old_connections``). Between looks the
stream sleeps until the engine broadcasts to the session's channel-layer groups (its
page, its task board, the approvals queue, its running units' traces), at least
every ``SF_API_EVENTS_POLL`` (a broadcast can be lost; the database cannot) and never
more often than every ``GAP`` (a streaming unit broadcasts many times a second).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from django.conf import settings
from django.db import close_old_connections

from sf_core.live import Groups
from tasks_app.features.headless.cursor import ObserverState
from tasks_app.features.headless.watch import WatchStep, watch_heartbeat, watch_step

logger = logging.getLogger("sf.api.events")
GAP = 0.25  # seconds: the least time between two looks at the database
RETRY_MS = 2000  # what EventSource waits before it reconnects
T = TypeVar("T")


@dataclass(frozen=True)
class StreamTimes:
    heartbeat: float
    poll: float
    max_age: float

    @classmethod
    def from_settings(cls) -> StreamTimes:
        return cls(
            heartbeat=settings.SF_API_EVENTS_HEARTBEAT.total_seconds(),
            poll=settings.SF_API_EVENTS_POLL.total_seconds(),
            max_age=settings.SF_API_EVENTS_MAX_AGE.total_seconds(),
        )


def sse_message(event: Any, event_id: str | None) -> str:
    """One SSE message: the id (if any) and the event's one-line JSON."""
    head = f"id: {event_id}\n" if event_id else ""
    return f"{head}data: {event.model_dump_json()}\n\n"


async def in_database(function: Callable[..., T], **kwargs: Any) -> T:
    """``function`` on the loop's shared executor (not a thread of this request), with
    the thread's connection closed or recycled around it as Django does per request."""

    def call() -> T:
        close_old_connections()
        try:
            return function(**kwargs)
        finally:
            close_old_connections()

    return await sync_to_async(call, thread_sensitive=False)()


async def event_stream(
    *, session_id: int, state: ObserverState, head: list[str], times: StreamTimes
) -> AsyncIterator[str]:
    """The body of the response: ``head`` (already rendered), then the events."""
    yield f"retry: {RETRY_MS}\n\n"
    for chunk in head:
        yield chunk
    async with Wakeup(session_id) as wakeup:
        async for chunk in _follow(session_id, state, times, wakeup):
            yield chunk


async def _follow(
    session_id: int, state: ObserverState, times: StreamTimes, wakeup: Wakeup
) -> AsyncIterator[str]:
    loop = asyncio.get_running_loop()
    opened = loop.time()
    closes = opened + times.max_age
    next_beat = opened + times.heartbeat
    last_look = opened - GAP
    while True:
        await asyncio.sleep(max(0.0, last_look + GAP - loop.time()))
        last_look = loop.time()
        step: WatchStep = await in_database(watch_step, session_id=session_id, state=state)
        for event, event_id in step.events:
            yield sse_message(event, event_id)
        state = step.state
        if step.finished:
            return
        await wakeup.follow_units(step.running_units)
        while True:  # until a broadcast, the fallback poll, or the stream's end
            now = loop.time()
            if now >= closes:
                return
            if now >= next_beat:
                beat = await in_database(watch_heartbeat, session_id=session_id)
                if beat is not None:
                    yield sse_message(beat, None)
                next_beat = now + times.heartbeat
            deadline = min(next_beat, closes, last_look + times.poll)
            woken = await wakeup.wait(deadline - loop.time())
            if woken or loop.time() >= last_look + times.poll:
                break


class Wakeup:
    """A channel of this stream in the session's groups: any message wakes it.

    Without a channel layer, or when Redis refuses, the stream only polls."""

    def __init__(self, session_id: int) -> None:
        self.layer = get_channel_layer()
        self.groups = {Groups.session(session_id), Groups.tasks(session_id), Groups.APPROVALS}
        self.unit_groups: set[str] = set()
        self.woken = asyncio.Event()
        self.channel = ""
        self.receiver: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Wakeup:
        if self.layer is None:
            return self
        try:
            self.channel = await self.layer.new_channel()
            for group in self.groups:
                await self.layer.group_add(group, self.channel)
        except Exception:  # Redis is down: the fallback poll still finds every event
            logger.warning("live events: no channel layer, polling only", exc_info=True)
            self.layer = None
            return self
        self.receiver = asyncio.create_task(self._receive())
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self.receiver is not None:
            self.receiver.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.receiver
        if self.layer is None:
            return
        for group in self.groups | self.unit_groups:
            try:
                await self.layer.group_discard(group, self.channel)
            except Exception:  # the group's expiry removes it later
                logger.info("live events: could not leave %s", group, exc_info=True)

    async def _receive(self) -> None:
        assert self.layer is not None
        while True:
            try:
                await self.layer.receive(self.channel)
            except asyncio.CancelledError:
                raise
            except Exception:
                logger.warning("live events: receive failed", exc_info=True)
                await asyncio.sleep(1)
                continue
            self.woken.set()

    async def follow_units(self, units: list[int]) -> None:
        """Join the trace groups of the running units (tool calls), leave the rest."""
        if self.layer is None:
            return
        wanted = {Groups.unit(pk) for pk in units}
        try:
            for group in wanted - self.unit_groups:
                await self.layer.group_add(group, self.channel)
            for group in self.unit_groups - wanted:
                await self.layer.group_discard(group, self.channel)
        except Exception:
            logger.info("live events: could not follow units", exc_info=True)
        self.unit_groups = wanted

    async def wait(self, seconds: float) -> bool:
        """True if a broadcast came within ``seconds``."""
        if seconds > 0:
            try:
                async with asyncio.timeout(seconds):
                    await self.woken.wait()
            except TimeoutError:
                return False
        woken = self.woken.is_set()
        self.woken.clear()
        return woken
