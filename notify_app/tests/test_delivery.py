"""Delivery from the outbox: once per event across a worker's death, signed webhooks,
email, browser, the backoff schedule and giving up."""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core import mail
from django.utils import timezone

from agents_app.models import Project
from notify_app.delivery import backoff, deliveries_claim, deliveries_run, delivery_deliver
from notify_app.models import Delivery, DeliveryStatus, Notification, NotificationPreference
from notify_app.outbox import notification_enqueue
from notify_app.senders import signature, signature_verify
from notify_app.tests.conftest import SECRET, WebhookServer
from sf_core.notices import Notice, NoticeKind
from tasks_app.engine.workers import _sweep_others

pytestmark = pytest.mark.django_db


def webhook_only(user: User, url: str) -> None:
    NotificationPreference.objects.create(
        user=user, email=False, browser=False, webhook_url=url, webhook_secret=SECRET
    )


def notify(project: Project, key: str = "k", kind: NoticeKind = NoticeKind.TASK_FAILED) -> Any:
    notice = Notice(
        kind=kind, dedupe_key=key, project_id=project.pk, text="task a failed", url="/x/"
    )
    return notification_enqueue(notice=notice)


def test_a_delivery_claimed_by_a_worker_that_died_is_sent_once_after_the_lease(
    project: Project, user: User, webhook: WebhookServer, settings: Any
) -> None:
    settings.SF_NOTIFY_LEASE = timedelta(milliseconds=300)
    webhook_only(user, webhook.url)
    notify(project)
    claims = deliveries_claim(worker="doomed")  # committed: then the worker is killed
    assert len(claims) == 1
    assert _sweep_now() == {}  # still leased to the dead worker: nobody takes it
    time.sleep(0.35)
    assert _sweep_now() == {"sent": 1}  # the workers' heartbeat sweep redelivers
    assert len(webhook.received) == 1
    assert webhook.received[0].verified
    delivery = Delivery.objects.get()
    assert (delivery.status, delivery.attempts) == (DeliveryStatus.SENT, 2)
    assert delivery_deliver(claims[0]) == "lost"  # the dead worker's claim is void
    time.sleep(0.35)
    assert _sweep_now() == {}  # a sent delivery is never due again
    assert len(webhook.received) == 1


def _sweep_now() -> dict[str, int]:
    """What the heartbeat thread's sweep does, counted from the rows it changed."""
    before = dict(Delivery.objects.values_list("pk", "status"))
    _sweep_others()
    after = dict(Delivery.objects.values_list("pk", "status"))
    counts: dict[str, int] = {}
    for pk, status in after.items():
        if before.get(pk) != status:
            counts[status] = counts.get(status, 0) + 1
    return counts


def test_the_webhook_posts_slack_json_signed_over_timestamp_and_body(
    project: Project, user: User, webhook: WebhookServer
) -> None:
    webhook_only(user, webhook.url)
    notify(project)
    assert deliveries_run(worker="w") == {"sent": 1}
    (request,) = webhook.received
    assert request.verified
    assert request.headers["x-sf-signature"].startswith("v0=")
    assert "task a failed" in request.json["text"]
    assert request.json["blocks"][0]["type"] == "header"
    assert request.json["sf"]["kind"] == "task_failed"
    # Tampered body, wrong secret or an old timestamp: refused.
    stamp = request.headers["x-sf-request-timestamp"]
    signed = request.headers["x-sf-signature"]
    assert not signature_verify(SECRET, timestamp=stamp, body=request.body + b" ", signed=signed)
    assert not signature_verify("other", timestamp=stamp, body=request.body, signed=signed)
    old = str(int(stamp) - 600)
    assert not signature_verify(
        SECRET, timestamp=old, body=request.body, signed=signature(SECRET, old, request.body)
    )


def test_the_documented_signature_by_hand() -> None:
    import hashlib
    import hmac

    expected = hmac.new(b"k", b"v0:1700000000:{}", hashlib.sha256).hexdigest()
    assert signature("k", "1700000000", b"{}") == f"v0={expected}"


def test_a_failing_webhook_backs_off_then_gives_up(
    project: Project, user: User, webhook: WebhookServer, settings: Any
) -> None:
    settings.SF_NOTIFY_MAX_ATTEMPTS = 3
    webhook.answer = 500
    webhook_only(user, webhook.url)
    notify(project)
    results = []
    for attempt in range(1, 4):
        Delivery.objects.update(next_attempt_at=timezone.now())  # its time has come
        before = timezone.now()
        results.append(deliveries_run(worker="w"))
        delivery = Delivery.objects.get()
        assert delivery.attempts == attempt
        assert "500" in delivery.last_error
        if attempt < 3:
            wait = delivery.next_attempt_at - before
            assert backoff(attempt) <= wait < backoff(attempt) + timedelta(seconds=5)
    assert results == [{"retry": 1}, {"retry": 1}, {"failed": 1}]
    assert Delivery.objects.get().status == DeliveryStatus.FAILED
    assert len(webhook.received) == 3


def test_the_backoff_doubles_up_to_the_maximum(settings: Any) -> None:
    settings.SF_NOTIFY_BACKOFF = timedelta(seconds=30)
    settings.SF_NOTIFY_BACKOFF_MAX = timedelta(minutes=10)
    waits = [backoff(n).total_seconds() for n in range(1, 8)]
    assert waits == [30, 60, 120, 240, 480, 600, 600]


LOOPBACK_AND_PRIVATE = [
    "127.0.0.1",
    "localhost",
    "[::1]",
    "0.0.0.0",
    "10.1.2.3",
    "169.254.169.254",
    "[::ffff:127.0.0.1]",
    "[64:ff9b::7f00:1]",
    "[2002:7f00:1::]",
    "2130706433",
    "0177.0.0.1",
]
NOT_DELIVERED = "could not be reached (or is not a public address)"


@pytest.mark.parametrize("host", LOOPBACK_AND_PRIVATE)
def test_a_webhook_to_a_loopback_or_private_form_is_refused_in_every_profile(
    project: Project, user: User, webhook: WebhookServer, settings: Any, host: str
) -> None:
    settings.SF_NET_ALLOW_HOSTS = []  # what every deployment has unless an operator adds one
    settings.SF_NOTIFY_WEBHOOK_TIMEOUT = timedelta(seconds=1)
    port = webhook.url.split(":")[2].split("/")[0]
    webhook_only(user, f"http://{host}:{port}/hook")
    notify(project)
    assert deliveries_run(worker="w") == {"retry": 1}
    assert NOT_DELIVERED in Delivery.objects.get().last_error
    assert webhook.received == []


def test_a_refused_address_and_an_unreachable_one_read_the_same(
    project: Project, user: User, webhook: WebhookServer, settings: Any
) -> None:
    """The deliveries list is no port-probe oracle: a closed port on an allowed host
    and a refused private address give the same error."""
    closed = webhook.url.replace(webhook.url.split(":")[2].split("/")[0], "1")
    webhook_only(user, closed)
    notify(project)
    deliveries_run(worker="w")
    assert Delivery.objects.get().last_error == f"DeliveryError: webhook: 127.0.0.1 {NOT_DELIVERED}"


def test_email_goes_through_djangos_backend(project: Project, user: User, settings: Any) -> None:
    settings.SF_PUBLIC_URL = "https://sf.example.com"
    User.objects.filter(pk=user.pk).update(email="ada@example.com")
    NotificationPreference.objects.create(user=user, browser=False)
    notify(project)
    assert deliveries_run(worker="w") == {"sent": 1}
    (message,) = mail.outbox
    assert message.to == ["ada@example.com"]
    assert message.subject == "SF · Task failed"
    assert "task a failed" in message.body
    assert "https://sf.example.com/x/" in message.body
    assert deliveries_run(worker="w") == {}
    assert len(mail.outbox) == 1


def test_concurrent_claims_take_different_rows(project: Project, user: User) -> None:
    NotificationPreference.objects.create(user=user, email=False)
    for key in "abc":
        notify(project, key=key)
    first = deliveries_claim(worker="one", limit=2)
    second = deliveries_claim(worker="two", limit=2)
    assert len(first) == 2
    assert len(second) == 1
    assert not {c.delivery_id for c in first} & {c.delivery_id for c in second}
    assert Notification.objects.count() == 3
