"""The worker registry: Celery workers report start, heartbeat and stop to the database.

The dashboard reads this table; a worker killed with ``kill -9`` never says goodbye,
so "online" means "not stopped and heard from within ``SF_WORKER_STALE_AFTER``".
"""

from __future__ import annotations

import logging
import os
import threading
import time
from typing import Any

from celery import signals
from django.conf import settings
from django.db import close_old_connections, transaction
from django.utils import timezone

from sf_core.live import Groups, broadcast, live_stats
from sf_core.signals import sweep_due
from tasks_app.engine.sweep import engine_sweep
from tasks_app.models import Worker, WorkerProbe

logger = logging.getLogger("sf.workers")


def worker_register(*, hostname: str, pid: int, concurrency: int, queues: str) -> Worker:
    """Record that a worker is up (again) and tell every status page."""
    now = timezone.now()
    with transaction.atomic():
        worker, _ = Worker.objects.update_or_create(
            hostname=hostname,
            defaults={
                "pid": pid,
                "concurrency": concurrency,
                "queues": queues,
                "started_at": now,
                "last_heartbeat_at": now,
                "stopped_at": None,
            },
        )
        broadcast(Groups.SYSTEM_STATUS, "status.changed")
    return worker


def worker_heartbeat(*, hostname: str) -> bool:
    """Refresh a running worker's heartbeat and its live-update counts (this process's).
    False if the worker is unknown or stopped."""
    live = live_stats()
    updated = Worker.objects.filter(hostname=hostname, stopped_at__isnull=True).update(
        last_heartbeat_at=timezone.now(),
        live_sent=live["sent"],
        live_coalesced=live["coalesced"],
        live_dropped=live["dropped"],
        live_failed=live["failed"],
    )
    return updated == 1


def worker_stop(*, hostname: str) -> None:
    """Record a clean worker shutdown and tell every status page."""
    with transaction.atomic():
        Worker.objects.filter(hostname=hostname).update(stopped_at=timezone.now())
        broadcast(Groups.SYSTEM_STATUS, "status.changed")


def worker_probe_answer(*, probe_id: int, hostname: str) -> bool:
    """Answer a probe once; a redelivered probe message changes nothing."""
    answered = WorkerProbe.objects.filter(pk=probe_id, answered_at__isnull=True).update(
        answered_at=timezone.now(), answered_by=hostname
    )
    return answered == 1


class _Heartbeat:
    """A daemon thread in the worker's main process: refreshes the worker's row and,
    every ``SF_SWEEP_INTERVAL``, sweeps for crashed units and lost dispatches (the
    database, not the broker, decides what must run)."""

    def __init__(self, hostname: str) -> None:
        self.hostname = hostname
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, name="sf-heartbeat", daemon=True)

    def _run(self) -> None:
        interval = settings.SF_WORKER_HEARTBEAT.total_seconds()
        sweep_every = settings.SF_SWEEP_INTERVAL.total_seconds()
        last_sweep = time.monotonic()
        while not self.stopping.wait(interval):
            try:
                close_old_connections()
                worker_heartbeat(hostname=self.hostname)
                if time.monotonic() - last_sweep >= sweep_every:
                    last_sweep = time.monotonic()
                    engine_sweep()
                    _sweep_others()
            except Exception:  # keep beating: the database may be back next time
                logger.warning("heartbeat of %s failed", self.hostname, exc_info=True)
            finally:
                close_old_connections()


def _sweep_others() -> None:
    """Apps above the engine sweep what they own (``sweep_due``); one failing receiver
    does not keep the others from theirs."""
    for receiver, result in sweep_due.send_robust(sender=_Heartbeat):
        if isinstance(result, Exception):
            logger.warning("sweep receiver %r failed", receiver, exc_info=result)


_heartbeat: _Heartbeat | None = None


@signals.worker_ready.connect
def _on_worker_ready(sender: Any = None, **_: Any) -> None:
    global _heartbeat
    # The sender is the worker's consumer; its controller knows the pool size.
    hostname = sender.hostname
    queues = ",".join(sorted(sender.app.amqp.queues.consume_from))
    concurrency = getattr(sender.controller, "concurrency", None) or 1
    worker_register(hostname=hostname, pid=os.getpid(), concurrency=concurrency, queues=queues)
    _heartbeat = _Heartbeat(hostname)
    _heartbeat.thread.start()
    logger.info("worker %s registered", hostname)


@signals.worker_shutdown.connect
def _on_worker_shutdown(sender: Any = None, **_: Any) -> None:
    if _heartbeat is None:
        return
    _heartbeat.stopping.set()
    close_old_connections()
    worker_stop(hostname=_heartbeat.hostname)
    logger.info("worker %s stopped", _heartbeat.hostname)
