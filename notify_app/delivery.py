"""Delivering the outbox: claim due deliveries, send, mark sent, or retry with backoff.

At least once, and never again once sent:

* A claim (``select_for_update(skip_locked=True)``, so concurrent workers take
  different rows) counts the attempt and moves ``next_attempt_at`` one lease ahead
  under a fresh token. The claim commits before anything is sent.
* A worker that dies after its claim leaves the row pending; when the lease is over
  it is due again, and the next run (a kick, or the sweep every ``SF_SWEEP_INTERVAL``
  from each worker's heartbeat) claims and sends it.
* Marking sent is a conditional update on the claim's token and ``pending``; a sent
  row is never due again, so it is never claimed, so never sent twice. A worker that
  stalled past its lease (its token replaced) does not send at all.
* The lease is longer than the webhook timeout (a system check keeps it so), so a
  worker that is only slow cannot have its delivery sent a second time.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from notify_app.models import Delivery, DeliveryStatus
from notify_app.senders import delivery_send

logger = logging.getLogger("sf.notify")
BATCH = 20


@dataclass(frozen=True)
class Claim:
    delivery_id: int
    token: str
    until: datetime


def backoff(attempts: int) -> timedelta:
    """How long to wait after the ``attempts``-th failure: the base, doubled each
    time, at most ``SF_NOTIFY_BACKOFF_MAX`` (30 s, 1 min, 2 min, … with the defaults)."""
    base: timedelta = settings.SF_NOTIFY_BACKOFF
    longest: timedelta = settings.SF_NOTIFY_BACKOFF_MAX
    return min(base * 2 ** max(0, attempts - 1), longest)


def deliveries_claim(*, worker: str, limit: int = BATCH) -> list[Claim]:
    """Claim up to ``limit`` due deliveries for one lease. Committed on return."""
    now = timezone.now()
    until = now + settings.SF_NOTIFY_LEASE
    token = f"{worker}:{uuid.uuid4().hex[:12]}"
    with transaction.atomic():
        due = Delivery.objects.select_for_update(skip_locked=True).filter(
            status=DeliveryStatus.PENDING, next_attempt_at__lte=now
        )
        ids = list(due.order_by("next_attempt_at", "pk").values_list("pk", flat=True)[:limit])
        # Conditional as well: SQLite (embedded) has no row locks, two claims may read
        # the same rows; the later token wins and the earlier run finds its claim lost.
        Delivery.objects.filter(pk__in=ids, status=DeliveryStatus.PENDING).update(
            attempts=F("attempts") + 1, next_attempt_at=until, claimed_by=token
        )
    return [Claim(delivery_id=pk, token=token, until=until) for pk in ids]


def delivery_deliver(claim: Claim) -> str:
    """Send one claimed delivery and record how it went: sent, retry or failed."""
    delivery = Delivery.objects.select_related("notification", "user").get(pk=claim.delivery_id)
    if delivery.claimed_by != claim.token or timezone.now() >= claim.until:
        return "lost"  # the lease ran out and another run has it now
    try:
        delivery_send(delivery)
    except Exception as error:  # any channel error is worth a later try, and logged
        return delivery_failed(delivery=delivery, token=claim.token, error=error)
    return delivery_sent(delivery_id=delivery.pk, token=claim.token)


def delivery_sent(*, delivery_id: int, token: str) -> str:
    marked = Delivery.objects.filter(
        pk=delivery_id, status=DeliveryStatus.PENDING, claimed_by=token
    ).update(status=DeliveryStatus.SENT, sent_at=timezone.now(), last_error="")
    return "sent" if marked == 1 else "lost"


def delivery_failed(*, delivery: Delivery, token: str, error: Exception) -> str:
    """Schedule the next try after ``backoff``; give up after ``SF_NOTIFY_MAX_ATTEMPTS``."""
    message = f"{type(error).__name__}: {error}"[:2000]
    spent = delivery.attempts >= settings.SF_NOTIFY_MAX_ATTEMPTS
    fields: dict[str, object] = {"last_error": message}
    if spent:
        fields["status"] = DeliveryStatus.FAILED
    else:
        fields["next_attempt_at"] = timezone.now() + backoff(delivery.attempts)
    Delivery.objects.filter(pk=delivery.pk, status=DeliveryStatus.PENDING, claimed_by=token).update(
        **fields
    )
    logger.warning(
        "notification delivery %s (%s, attempt %s) failed: %s",
        delivery.pk,
        delivery.channel,
        delivery.attempts,
        message,
    )
    return "failed" if spent else "retry"


def deliveries_run(*, worker: str, limit: int | None = None) -> dict[str, int]:
    """Deliver everything due now, a batch at a time. Returns counts by result."""
    counts: dict[str, int] = {}
    done = 0
    while limit is None or done < limit:
        claims = deliveries_claim(worker=worker, limit=BATCH if limit is None else limit - done)
        if not claims:
            break
        for claim in claims:
            result = delivery_deliver(claim)
            counts[result] = counts.get(result, 0) + 1
        done += len(claims)
    return counts
