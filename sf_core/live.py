"""Live updates: one place that names channel-layer groups and broadcasts to them.

Services broadcast small, high-level events (``{"type": "status.changed"}``); the
consumers in each app render the same template partial the page uses and push
the HTML for htmx to swap by id.

Sending happens on one long-lived event loop in a background thread: the
channel layer keeps its Redis connections there (``async_to_sync`` would build a
loop and a connection per message), messages keep their order, and a service
never waits for a browser.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import uuid
from concurrent.futures import Future
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import InMemoryChannelLayer, get_channel_layer
from django.db import transaction

logger = logging.getLogger("sf.live")

BROADCAST_ID = "broadcast_id"  # the key of each message's unique id


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

    Outside a transaction it is sent at once. A failure to reach the channel layer
    is logged, never raised: a live update must not undo the write it reports.
    """
    # The id lets the consumers of one process render once for every browser they
    # serve that received this very message (sf_core.consumers.SharedRenders).
    message = {"type": event_type, **payload, BROADCAST_ID: uuid.uuid4().hex}
    transaction.on_commit(lambda: _SENDER.send(group, message))


class _Sender:
    """A daemon thread running the event loop that all broadcasts go through."""

    def __init__(self) -> None:
        self.loop: asyncio.AbstractEventLoop | None = None
        self.lock = threading.Lock()

    def send(self, group: str, message: dict[str, Any]) -> Future[None] | None:
        layer = get_channel_layer()
        if layer is None:
            return None
        if isinstance(layer, InMemoryChannelLayer):
            # Its queues belong to the server's own loop, which async_to_sync targets.
            async_to_sync(self._send)(layer, group, message)
            return None
        future = asyncio.run_coroutine_threadsafe(self._send(layer, group, message), self._loop())
        return future

    def flush(self, timeout: float = 5) -> None:
        """Wait until everything sent so far is out (tests, process shutdown)."""
        if self.loop is not None:
            asyncio.run_coroutine_threadsafe(asyncio.sleep(0), self.loop).result(timeout)

    def _loop(self) -> asyncio.AbstractEventLoop:
        with self.lock:
            if self.loop is None or self.loop.is_closed():
                loop = asyncio.new_event_loop()
                threading.Thread(target=loop.run_forever, name="sf-live", daemon=True).start()
                self.loop = loop
            return self.loop

    @staticmethod
    async def _send(layer: Any, group: str, message: dict[str, Any]) -> None:
        try:
            await layer.group_send(group, message)
        except Exception:  # the layer (Redis) may be down; the database already has the truth
            logger.warning("could not broadcast %s to %s", message["type"], group, exc_info=True)


_SENDER = _Sender()


def flush() -> None:
    _SENDER.flush()
