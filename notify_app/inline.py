"""Embedded mode (no broker, no workers, so no heartbeat sweep): one daemon thread in
the web process delivers, and keeps waking every ``SF_SWEEP_INTERVAL`` while any
delivery is still pending (a retry's backoff), then ends until the next kick."""

from __future__ import annotations

import logging
import threading

from django.conf import settings
from django.db import close_old_connections, connection

from notify_app.delivery import deliveries_run
from notify_app.models import Delivery, DeliveryStatus

logger = logging.getLogger("sf.notify")

_lock = threading.Lock()
_wake = threading.Event()
_thread: threading.Thread | None = None


def inline_kick() -> None:
    """Deliver now in this process: wake the thread, or start it."""
    global _thread
    with _lock:
        _wake.set()
        if _thread is not None and _thread.is_alive():
            return
        _thread = threading.Thread(target=_run, name="sf-notify", daemon=True)
        _thread.start()


def _run() -> None:
    global _thread
    try:
        while True:
            _wake.clear()
            try:
                close_old_connections()
                deliveries_run(worker="inline")
                pending = Delivery.objects.filter(status=DeliveryStatus.PENDING).exists()
            except Exception:  # the database may be back next time
                logger.warning("inline notification delivery failed", exc_info=True)
                pending = True
            with _lock:  # decide to end under the lock: a kick now starts a new thread
                if not pending and not _wake.is_set():
                    _thread = None
                    return
            _wake.wait(settings.SF_SWEEP_INTERVAL.total_seconds())
    finally:
        connection.close()
