"""Embedded mode (SQLite, no broker, so no worker and no heartbeat sweep): one daemon
thread of the web process sweeps the schedules every ``SF_SWEEP_INTERVAL``. Started by
``sf_web/asgi.py`` (daphne); ``manage.py sf schedules sweep`` runs one pass by hand, or
from the system's cron where no web process runs. In team mode the workers' sweep runs
schedules and this thread never starts."""

from __future__ import annotations

import logging
import threading

from django.conf import settings
from django.db import close_old_connections, connection

from tasks_app.features.schedules.runner import schedules_sweep

logger = logging.getLogger("sf.schedules")
_lock = threading.Lock()
_stop = threading.Event()
_thread: threading.Thread | None = None


def schedules_inline_start() -> bool:
    """Start the thread once per process, in embedded mode only. True if it runs."""
    global _thread
    if not settings.CELERY_TASK_ALWAYS_EAGER:
        return False
    with _lock:
        if _thread is None or not _thread.is_alive():
            _stop.clear()
            _thread = threading.Thread(target=_run, name="sf-schedules", daemon=True)
            _thread.start()
    return True


def schedules_inline_stop(timeout: float = 10) -> None:
    """Stop the thread (tests; a daemon thread otherwise ends with its process)."""
    _stop.set()
    if _thread is not None:
        _thread.join(timeout)


def _run() -> None:
    interval = settings.SF_SWEEP_INTERVAL.total_seconds()
    try:
        while not _stop.is_set():
            try:
                close_old_connections()
                schedules_sweep()
            except Exception:  # the database may be back next time
                logger.warning("embedded schedule sweep failed", exc_info=True)
            _stop.wait(interval)
    finally:
        connection.close()
