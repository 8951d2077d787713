"""Live updates: one place that names channel-layer groups and broadcasts to them.

Services broadcast small, high-level events (``{"type": "status.changed"}``); the
consumers in each app render the same template partial the page uses and push
the HTML for htmx to swap by id.

Sending happens on one long-lived event loop in a background thread: the
channel layer keeps its Redis connections there (``async_to_sync`` would build a
loop and a connection per message), and a service never waits for a browser.

The sender is bounded (issue [8/8]: two workers running 100 units printed
``MaxConnectionsError: Too many connections``, because every message was its own
coroutine and a burst held more than the pool's 100 connections at once). Now
messages wait in a few lanes (``SF_LIVE_LANES``), a group always in the same lane so
its messages keep their order, each lane sending one message at a time: at most that
many of the layer's pooled connections are ever in use. A message identical to one
still waiting is not queued twice (consumers re-render the whole partial, so the
second would repeat the first). A lane that is full (``SF_LIVE_QUEUE`` messages in
all) drops its oldest message — the newest state is the one worth showing — and a
message Redis refuses is dropped too: both are counted (``live_stats``, shown per
worker on the dashboard and by ``sf status``) and logged, never raised.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import threading
import time
import uuid
import zlib
from collections import Counter, deque
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import InMemoryChannelLayer, get_channel_layer
from django.conf import settings
from django.db import transaction

logger = logging.getLogger("sf.live")
SEND_TIMEOUT_SECONDS = 5.0  # a Redis that hangs holds one lane this long per message
LOG_EVERY_SECONDS = 10.0  # drops and failures are logged at most this often
# How long a woken lane waits for the rest of a burst before sending (``_drain``): well
# under what a person watching a page notices.
LINGER_SECONDS = 0.025
STAT_NAMES = ("sent", "coalesced", "dropped", "failed")
BROADCAST_ID = "broadcast_id"  # the key of each message's unique id
# [sender, group, number]: each sending process numbers its messages to each group, so
# a consumer sees a gap when one was dropped or lost on the way (sf_core.consumers).
SEQUENCE = "sequence"
MAX_NUMBERED_GROUPS = 10_000  # a long-lived worker sends to a group per unit
PER_MESSAGE_KEYS = frozenset({BROADCAST_ID})  # unique to each message: not compared


class Groups:
    """The name of every channel-layer group SF broadcasts to, in one place.

    Group names may only hold ASCII letters, digits, hyphens and periods.
    """

    SYSTEM_STATUS = "system-status"  # the dashboard's database/broker/worker status
    APPROVALS = "approvals"  # the approvals queue
    ALL_TASKS = "tasks.all"  # the task board across sessions
    SESSIONS = "sessions"  # every session's status, axes or pause (the dashboard's table)

    @staticmethod
    def session(session_id: int) -> str:
        """One session's page: its badge, timeline and plans."""
        return f"session.{session_id}"

    @staticmethod
    def tasks(session_id: int) -> str:
        """One session's task board."""
        return f"tasks.{session_id}"

    @staticmethod
    def unit(unit_id: int) -> str:
        """One unit's live trace."""
        return f"unit.{unit_id}"

    @staticmethod
    def user(user_id: int) -> str:
        """One person's browser notifications, on every page they have open."""
        return f"user.{user_id}"


def broadcast(group: str, event_type: str, **payload: Any) -> None:
    """Send ``event_type`` to ``group`` once the current transaction commits.

    Outside a transaction it is queued at once. A failure to reach the channel layer
    is counted and logged, never raised: a live update must not undo the write it
    reports, and a service never waits for it.
    """
    # The id lets the consumers of one process render once for every browser they
    # serve that received this very message (sf_core.consumers.SharedRenders).
    message = {"type": event_type, **payload, BROADCAST_ID: uuid.uuid4().hex}
    transaction.on_commit(lambda: _SENDER.send(group, message))


@dataclass
class _Lane:
    """Messages of the groups hashed to this lane, sent one at a time, in order."""

    items: deque[tuple[str, Any, str, dict[str, Any]]] = field(default_factory=deque)
    wakeup: asyncio.Event | None = None
    busy: bool = False


class _Sender:
    """A daemon thread running the event loop that all broadcasts go through."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.loop: asyncio.AbstractEventLoop | None = None
        self.lanes: list[_Lane] = []
        self.waiting: set[str] = set()  # keys of the messages in a lane, for coalescing
        self.counts: Counter[str] = Counter()
        self.logged_at = 0.0
        self.thread: threading.Thread | None = None
        self.tasks: list[Future[None]] = []
        self.origin = uuid.uuid4().hex[:12]
        self.numbers: Counter[str] = Counter()  # the last number sent to each group

    def send(self, group: str, message: dict[str, Any]) -> None:
        layer = get_channel_layer()
        if layer is None:
            return
        if isinstance(layer, InMemoryChannelLayer):
            # Its queues belong to the server's own loop, which async_to_sync targets.
            async_to_sync(self._send_now)(layer, group, message)
            return
        # What makes two updates the same: the group and the message, less any per-message
        # id (a consumer that dedupes renders by it loses nothing when one is coalesced).
        shown = {k: v for k, v in message.items() if k not in PER_MESSAGE_KEYS}
        key = group + json.dumps(shown, sort_keys=True, default=str)
        with self.lock:
            loop = self._loop()
            if key in self.waiting:
                self.counts["coalesced"] += 1
                return
            lane = self.lanes[zlib.crc32(group.encode()) % len(self.lanes)]
            if len(lane.items) >= self._lane_capacity():
                dropped_key, *_ = lane.items.popleft()
                self.waiting.discard(dropped_key)
                self.counts["dropped"] += 1
                self._log_trouble("a live update lane is full: its oldest message was dropped")
            if len(self.numbers) >= MAX_NUMBERED_GROUPS:  # a new origin: consumers start over
                self.origin, self.numbers = uuid.uuid4().hex[:12], Counter()
            self.numbers[group] += 1  # numbered as queued: a dropped one leaves a gap
            message = {**message, SEQUENCE: [self.origin, group, self.numbers[group]]}
            lane.items.append((key, layer, group, message))
            self.waiting.add(key)
            idle = len(lane.items) == 1 and not lane.busy
        if idle and lane.wakeup is not None:
            loop.call_soon_threadsafe(lane.wakeup.set)

    def stats(self) -> dict[str, int]:
        with self.lock:
            pending = sum(len(lane.items) for lane in self.lanes)
            return {name: self.counts[name] for name in STAT_NAMES} | {"pending": pending}

    def flush(self, timeout: float = 5) -> None:
        """Wait until everything queued so far is out (tests, process shutdown)."""
        with self.lock:
            loop = self.loop
        if loop is not None and not loop.is_closed():
            asyncio.run_coroutine_threadsafe(self._drained(), loop).result(timeout)

    async def _drained(self) -> None:
        while True:
            with self.lock:
                if not any(lane.items or lane.busy for lane in self.lanes):
                    return
            await asyncio.sleep(0.002)

    def _lane_capacity(self) -> int:
        return max(1, settings.SF_LIVE_QUEUE // max(1, len(self.lanes)))

    def _loop(self) -> asyncio.AbstractEventLoop:
        """The sender's loop and its lanes, started on first use (under ``self.lock``)."""
        if self.loop is None or self.loop.is_closed():
            loop = asyncio.new_event_loop()
            self.lanes = [_Lane() for _ in range(settings.SF_LIVE_LANES)]
            self.waiting.clear()
            self.thread = threading.Thread(target=loop.run_forever, name="sf-live", daemon=True)
            self.thread.start()
            self.tasks = [
                asyncio.run_coroutine_threadsafe(self._drain(lane), loop) for lane in self.lanes
            ]
            self.loop = loop
        return self.loop

    async def _drain(self, lane: _Lane) -> None:
        """One lane's sender: one message at a time, so one pooled connection at most.

        Woken, it first lets the burst gather for ``LINGER_SECONDS``: the messages
        queued meanwhile coalesce with those waiting (a unit's trace appended ten times
        is one update), and the wake-up is the only one of the burst. Each send is
        Python work in this process (channels-redis), and it competed for the GIL with
        the tool calls it reported: sent once per burst instead of once per event, it
        no longer lengthens them."""
        lane.wakeup = asyncio.Event()
        while True:
            with self.lock:
                if lane.items:
                    key, layer, group, message = lane.items.popleft()
                    self.waiting.discard(key)
                    lane.busy = True
                else:
                    lane.busy = False
                    lane.wakeup.clear()
            if not lane.busy:
                await lane.wakeup.wait()
                with self.lock:
                    lane.busy = True  # no more wake-ups while the burst gathers
                await asyncio.sleep(LINGER_SECONDS)
                continue
            sent = await self._send_now(layer, group, message)
            with self.lock:
                self.counts["sent" if sent else "failed"] += 1

    async def _send_now(self, layer: Any, group: str, message: dict[str, Any]) -> bool:
        try:
            await asyncio.wait_for(layer.group_send(group, message), SEND_TIMEOUT_SECONDS)
        except Exception:  # the layer (Redis) may be down; the database already has the truth
            with self.lock:
                self._log_trouble(f"could not broadcast {message['type']} to {group}", error=True)
            return False
        return True

    def _log_trouble(self, what: str, *, error: bool = False) -> None:
        """Log (under ``self.lock``) at most every ``LOG_EVERY_SECONDS``, with the counts."""
        now = time.monotonic()
        if now - self.logged_at < LOG_EVERY_SECONDS:
            return
        self.logged_at = now
        counts = ", ".join(f"{name} {self.counts[name]}" for name in STAT_NAMES)
        logger.warning("%s (live updates so far: %s)", what, counts, exc_info=error)

    def close(self, timeout: float = 5) -> None:
        """Send what is queued, stop the loop and close its Redis connections (the
        channel layer closes a loop's pool when the loop closes)."""
        self.flush(timeout)
        with self.lock:
            loop, thread, self.loop = self.loop, self.thread, None
        if loop is None or thread is None:
            return
        for task in self.tasks:
            task.cancel()
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout)
        loop.close()

    def reset_after_fork(self) -> None:
        """A forked child has the parent's loop object but not its thread: start anew."""
        self.lock = threading.Lock()
        self.loop = None
        self.lanes = []
        self.waiting = set()
        self.counts = Counter()
        self.origin = uuid.uuid4().hex[:12]
        self.numbers = Counter()


_SENDER = _Sender()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_SENDER.reset_after_fork)


def flush(timeout: float = 5) -> None:
    _SENDER.flush(timeout)


def live_stats() -> dict[str, int]:
    """This process's live updates so far: sent, coalesced (an identical one was still
    waiting), dropped (a full lane), failed (the layer refused), and pending now."""
    return _SENDER.stats()
