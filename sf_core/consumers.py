"""Websocket consumers that push server-rendered partials for htmx to swap by id."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from channels.consumer import get_handler_name
from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from channels.layers import InMemoryChannelLayer
from django.conf import settings
from django.core.exceptions import ObjectDoesNotExist, PermissionDenied
from django.http import Http404

from sf_core.live import BROADCAST_ID, SEQUENCE

Rendered = TypeVar("Rendered")

# Close codes in the application range (4000-4999): the browser sees why it was refused.
CLOSE_UNAUTHENTICATED = 4401
CLOSE_FORBIDDEN = 4403


class LivePartialConsumer(AsyncWebsocketConsumer):
    """Authenticated consumer that joins groups and pushes one rendered partial.

    Subclasses name their groups (``live_groups``) and render their partial
    (``render``); every group event whose handler calls ``push`` re-renders it.

    Some changes send no event this process can hear, so the partial is also rendered
    again every ``SF_STATUS_REFRESH`` and sent when it changed: always where a
    subclass sets ``refresh_always`` (a worker killed with ``kill -9`` says nothing),
    and for every consumer in embedded mode, whose in-memory channel layer never hears
    the CLI, ``sf headless`` or any other process.

    A subclass whose partial is the same for everyone who may open it returns what it
    depends on from ``render_key``: the consumers of one process then share one render
    per message (``SharedRenders``) instead of one per browser.
    """

    live_groups: list[str]
    refresh_always = False
    refresh_task: asyncio.Task[None] | None = None
    last_html: str | None = None
    current_event: dict[str, Any] | None = None
    sequences: dict[tuple[str, str], int] | None = None

    async def connect(self) -> None:
        self.live_groups = []
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close(code=CLOSE_UNAUTHENTICATED)
            return
        try:
            self.live_groups = await database_sync_to_async(self.resolve_groups)()
        except (PermissionDenied, Http404, ObjectDoesNotExist):
            await self.close(code=CLOSE_FORBIDDEN)
            return
        for group in self.live_groups:
            await self.channel_layer.group_add(group, self.channel_name)
        joined = time.monotonic()  # a render started from now on sees every change we hear of
        await self.accept()
        await self._push_since(joined)
        if self.refresh_always or isinstance(self.channel_layer, InMemoryChannelLayer):
            self.refresh_task = asyncio.create_task(self._refresh_forever())

    async def disconnect(self, code: int) -> None:
        if self.refresh_task is not None:
            self.refresh_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.refresh_task
        for group in self.live_groups:
            await self.channel_layer.group_discard(group, self.channel_name)

    async def dispatch(self, message: dict[str, Any]) -> None:
        """Channels' dispatch, less its ``aclose_old_connections()`` before each group
        event: that is a job on the one thread that does all database work, so 200
        browsers on a board queued 200 jobs per event behind the renders (seconds of
        delay, benchmarks/fanout.py). A render closes old connections itself, before and
        after (``database_sync_to_async``); the socket's own messages keep the close."""
        if message["type"].startswith("websocket."):
            await super().dispatch(message)
            return
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"No handler for message type {message['type']}")
        # Handlers call ``push()`` without the event; the render to share depends on it.
        self.current_event = message
        try:
            await handler(message)
        finally:
            self.current_event = None

    async def push(self, event: dict[str, Any] | None = None) -> None:
        """Render the partial again for ``event`` (by default the one being handled)
        and send it."""
        await self._push_since(SHARED_RENDERS.since(event or self.current_event))

    async def _push_since(self, since: float) -> None:
        key = self.render_key()
        if key is None:
            html = await database_sync_to_async(self.render)()
        else:
            html = await SHARED_RENDERS.render(key, since, self.render)
            if html is self.last_html:  # this very render already went to this browser
                return
        self.last_html = html
        await self.send(text_data=html)

    async def _refresh_forever(self) -> None:
        interval = settings.SF_STATUS_REFRESH.total_seconds()
        while True:
            await asyncio.sleep(interval)
            html = await database_sync_to_async(self.render)()
            if html != self.last_html:  # unchanged: nothing to swap, a field keeps its text
                self.last_html = html
                await self.send(text_data=html)

    def missed_before(self, event: dict[str, Any]) -> bool:
        """Whether a message its sender numbered before ``event`` (to the same group)
        never reached this consumer: dropped by a full sender, or lost by Redis's
        pub/sub while this process reconnected. A consumer that sends only what changed
        then sends the whole partial instead. The first message from a sender is not a
        gap: what came before it is in the render sent on connect."""
        stamp = event.get(SEQUENCE)
        if not (isinstance(stamp, list | tuple) and len(stamp) == 3):
            return False
        origin, group, number = stamp
        if self.sequences is None or len(self.sequences) >= SharedRenders.MAX_KEYS:
            self.sequences = {}
        last = self.sequences.get((origin, group))
        self.sequences[(origin, group)] = number if last is None else max(last, number)
        return last is not None and number > last + 1

    def resolve_groups(self) -> list[str]:
        """Check access to what the URL names and return the groups to join."""
        raise NotImplementedError

    def render(self) -> str:
        raise NotImplementedError

    def render_key(self) -> Hashable | None:
        """What ``render`` depends on, if that is all: consumers with equal keys get the
        same HTML. None (the default): this consumer renders for itself alone."""
        return None


@dataclass
class _Render(Generic[Rendered]):
    result: asyncio.Future[Rendered]
    # time.monotonic() when it began reading the database, on the thread that does
    # database work; None while it waits for that thread (it will begin after now).
    started: float | None = None

    def serves(self, since: float) -> bool:
        return self.started is None or self.started >= since


class SharedRenders:
    """One render per partial and message for all the consumers of a process.

    Every browser on a board receives the same broadcast; rendering the board once for
    each of 200 browsers, one after the other on the thread that runs database work,
    made the last one wait 200 renders. A render that began after a message first
    reached this process reflects everything committed before the message was sent
    (broadcasts go out on commit), so every consumer that received that message may
    use it — and so may a render still waiting for the thread, and a render of a later
    message. So a partial has at most one render running and one waiting, however many
    browsers and messages arrive meanwhile.
    """

    MAX_KEYS = 2048  # of renders kept, and of messages remembered

    def __init__(self) -> None:
        self.latest: dict[Hashable, _Render[Any]] = {}
        self.first_seen: dict[str, float] = {}

    def since(self, event: dict[str, Any] | None) -> float:
        """The instant after which a render must begin to reflect ``event``: when the
        process first received it (or now, for an event without an id)."""
        now = time.monotonic()
        message_id = (event or {}).get(BROADCAST_ID)
        if not isinstance(message_id, str):
            return now
        if len(self.first_seen) >= self.MAX_KEYS:  # oldest first: dicts keep their order
            for old in list(self.first_seen)[: self.MAX_KEYS // 2]:
                del self.first_seen[old]
        return self.first_seen.setdefault(message_id, now)

    async def render(self, key: Hashable, since: float, render: Callable[[], Rendered]) -> Rendered:
        """The HTML of a render of ``key`` (``render`` run where database work runs)
        that began at or after ``since``: one running, waiting or done if it qualifies,
        else a new one that later callers may share."""
        loop = asyncio.get_running_loop()
        current = self.latest.get(key)
        if current is None or not current.serves(since) or current.result.get_loop() is not loop:
            current = self._start(key, render)
        # One browser leaving must not cancel the render the others are waiting for.
        return await asyncio.shield(current.result)

    def _start(self, key: Hashable, render: Callable[[], Rendered]) -> _Render[Rendered]:
        def timed() -> Rendered:
            entry.started = time.monotonic()  # before the first query
            return render()

        result = asyncio.ensure_future(database_sync_to_async(timed)())
        entry: _Render[Rendered] = _Render(result=result)
        entry.result.add_done_callback(lambda done: self._forget_failed(key, done))
        self._trim()
        self.latest[key] = entry
        return entry

    def _forget_failed(self, key: Hashable, done: asyncio.Future[Any]) -> None:
        failed = done.cancelled() or done.exception() is not None
        if failed and (entry := self.latest.get(key)) is not None and entry.result is done:
            del self.latest[key]

    def _trim(self) -> None:
        if len(self.latest) >= self.MAX_KEYS:
            for key in [key for key, entry in self.latest.items() if entry.result.done()]:
                del self.latest[key]


SHARED_RENDERS = SharedRenders()
