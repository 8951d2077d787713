"""A unit's trace as the unit page shows it: each event's HTML rendered once per process.

A trace event is written once and never changed (``agents_app.runtime.trace``), so its
HTML depends on the row alone. The unit page and its live partial used to render every
event again on every load and on every event appended: a 300-event trace took ~250 ms
(under load) and the live re-render of a running unit grew with every step. Now an
event already shown costs a dictionary lookup, and only new events load their payload.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from datetime import datetime

from django.template.loader import render_to_string
from django.utils.safestring import SafeString, mark_safe

from agents_app.models import TraceEvent
from tasks_app.trace_display import trace_entries

Key = tuple[int, datetime]  # an event's primary key and when it started

# Rendered events kept per process: ~2 KB each, so a few megabytes at most.
TRACE_HTML_CACHED = 5000


class _RenderedEvents:
    """A small LRU of rendered events by primary key, shared by the server's threads."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.items: OrderedDict[Key, SafeString] = OrderedDict()
        self.lock = threading.Lock()

    def get_many(self, keys: list[Key]) -> dict[Key, SafeString]:
        with self.lock:
            found = {key: self.items[key] for key in keys if key in self.items}
            for key in found:
                self.items.move_to_end(key)
        return found

    def set(self, key: Key, html: SafeString) -> None:
        with self.lock:
            self.items[key] = html
            self.items.move_to_end(key)
            while len(self.items) > self.size:
                self.items.popitem(last=False)


RENDERED = _RenderedEvents(TRACE_HTML_CACHED)
ENTRY_PARTIAL = "tasks_app/unit_detail.html#trace-entry"


def trace_html(unit_id: int) -> list[SafeString]:
    """The ``<li>`` of each of the unit's trace events, in order."""
    events = TraceEvent.objects.filter(unit_id=unit_id).order_by("seq")
    # With its time as well as its key: a database reset may hand the key out again.
    keys: list[Key] = list(events.values_list("pk", "started_at"))
    found = RENDERED.get_many(keys)
    missing = [pk for pk, started in keys if (pk, started) not in found]
    if missing:
        for entry in trace_entries(events.filter(pk__in=missing)):
            key = (entry.event.pk, entry.event.started_at)
            # render_to_string's HTML is escaped by the template already.
            found[key] = mark_safe(render_to_string(ENTRY_PARTIAL, {"entry": entry}))
            RENDERED.set(key, found[key])
    return [found[key] for key in keys]
