"""Workers as they report themselves (ephemeral runtime state)."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db import models
from django.utils import timezone


class Worker(models.Model):
    """A Celery worker process, as it last reported itself (ephemeral runtime state)."""

    hostname = models.CharField(max_length=255, unique=True)
    pid = models.PositiveIntegerField()
    concurrency = models.PositiveIntegerField(default=1)
    queues = models.CharField(max_length=255, blank=True)
    started_at = models.DateTimeField()
    last_heartbeat_at = models.DateTimeField()
    stopped_at = models.DateTimeField(null=True, blank=True)
    # The worker process's live updates since it started (``sf_core.live.live_stats``),
    # written with each heartbeat: the bounded sender drops and counts, never raises.
    live_sent = models.PositiveBigIntegerField(default=0)
    live_coalesced = models.PositiveBigIntegerField(default=0)
    live_dropped = models.PositiveBigIntegerField(default=0)
    live_failed = models.PositiveBigIntegerField(default=0)

    class Meta:
        ordering = ["hostname"]

    def __str__(self) -> str:
        return self.hostname

    def is_online(self, *, stale_after: timedelta, now: datetime | None = None) -> bool:
        now = now or timezone.now()
        return self.stopped_at is None and now - self.last_heartbeat_at <= stale_after


class WorkerProbe(models.Model):
    """A round trip through the broker: enqueued by SF, answered by whichever worker."""

    created_at = models.DateTimeField(default=timezone.now)
    answered_at = models.DateTimeField(null=True, blank=True)
    answered_by = models.CharField(max_length=255, blank=True)

    def __str__(self) -> str:
        return f"probe {self.pk}"
