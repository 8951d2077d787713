"""Live updates: one place that names channel-layer groups and broadcasts to them.

Services broadcast small, high-level events (``{"type": "status.changed"}``); the
consumers in each app render the same template partial the page uses and push
the HTML for htmx to swap by id.
"""

from __future__ import annotations

import logging
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction

logger = logging.getLogger("sf.live")

SYSTEM_STATUS = "system-status"


def group_name(kind: str, object_id: int | str | None = None) -> str:
    """The channel-layer group for ``kind`` (optionally one object of that kind).

    Group names may only hold ASCII letters, digits, hyphens and periods.
    """
    return kind if object_id is None else f"{kind}.{object_id}"


def broadcast(group: str, event_type: str, **payload: Any) -> None:
    """Send ``event_type`` to ``group`` once the current transaction commits.

    Outside a transaction it is sent at once. A failure to reach the channel layer
    is logged, never raised: a live update must not undo the write it reports.
    """
    message = {"type": event_type, **payload}
    transaction.on_commit(lambda: _send(group, message))


def _send(group: str, message: dict[str, Any]) -> None:
    layer = get_channel_layer()
    if layer is None:
        return
    try:
        async_to_sync(layer.group_send)(group, message)
    except Exception:  # the layer (Redis) may be down; the database already has the truth
        logger.warning("could not broadcast %s to %s", message["type"], group, exc_info=True)
