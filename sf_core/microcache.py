"""Page parts rendered at most once per interval per web process, shared by everyone who
would see the same thing.

The board of a 1,000-task session costs ~95 ms of CPU to read and render on a 2-core
machine of this kind; twenty people (or one team's CI polling it) asking at once queue
behind each other in the web processes (docs/performance.md). What they are shown is the
same for everyone who may view the session (the board's live consumer already shares one
render among its browsers), so the HTTP view keeps the last render of each (session,
filters, page) for ``SF_PAGE_CACHE`` (1 s by default; 0 turns it off).

Why this never leaves a page untrue: every page with a live part opens its websocket at
once, and the consumer sends a fresh render on connect (``sf_core.consumers``), so a
page served from this cache is replaced within one live update; a person's own action
(Retry, Skip…) answers with a render made after it, never from here. In-process on
purpose: nothing is serialized, nothing to invalidate across machines, bounded in size.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import TypeVar

from django.conf import settings

T = TypeVar("T")

MAX_KEYS = 256


class MicroCache:
    """The last value of each key, kept for ``SF_PAGE_CACHE`` seconds."""

    def __init__(self, max_keys: int = MAX_KEYS) -> None:
        self.max_keys = max_keys
        self.lock = threading.Lock()
        self.values: OrderedDict[Hashable, tuple[float, object]] = OrderedDict()
        self.hits = 0
        self.clock: Callable[[], float] = time.monotonic

    def get(self, key: Hashable, render: Callable[[], T]) -> T:
        """The value kept for ``key`` while it is fresh, else ``render()``'s, kept."""
        ttl = settings.SF_PAGE_CACHE.total_seconds()
        if ttl <= 0:
            return render()
        now = self.clock()
        with self.lock:
            kept = self.values.get(key)
            if kept is not None and now - kept[0] < ttl:
                self.hits += 1
                return kept[1]  # type: ignore[return-value]
        value = render()
        with self.lock:
            self.values[key] = (self.clock(), value)
            self.values.move_to_end(key)
            while len(self.values) > self.max_keys:
                self.values.popitem(last=False)
        return value

    def clear(self) -> None:
        with self.lock:
            self.values.clear()


PAGES = MicroCache()
