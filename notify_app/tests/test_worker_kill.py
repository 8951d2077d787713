"""Real Celery workers: one is killed with SIGKILL while its webhook request waits for
an answer; the next worker's heartbeat sweep delivers it once the lease is over, and
nobody sends it again after it is marked sent."""

from __future__ import annotations

import signal
import time
from typing import Any

import pytest
from celery import current_app
from django.contrib.auth.models import User

from agents_app.models import Project
from notify_app.models import Delivery, DeliveryStatus, NotificationPreference
from notify_app.outbox import DELIVER_TASK, notification_enqueue
from notify_app.tests.conftest import SECRET, WebhookServer
from sf_core.notices import Notice, NoticeKind
from tests.processes import WorkerProcess, free_port, wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

# The lease outlives the webhook timeout (sf.E020), both short for the test.
FAST = {
    "SF_NOTIFY_LEASE": "3s",
    "SF_NOTIFY_WEBHOOK_TIMEOUT": "2s",
    "SF_SWEEP_INTERVAL": "1s",
    "SF_NET_ALLOW_HOSTS": "127.0.0.1",  # the test's receiver, on loopback
}


def test_a_worker_killed_mid_webhook_loses_nothing_and_sends_nothing_twice(
    project: Project, user: User, webhook: WebhookServer
) -> None:
    NotificationPreference.objects.create(
        user=user, email=False, browser=False, webhook_url=webhook.url, webhook_secret=SECRET
    )
    webhook.hold = 1
    notice = Notice(kind=NoticeKind.STUCK_LOOP, dedupe_key="k", project_id=project.pk, text="x")
    notification_enqueue(notice=notice)
    queue = f"q-notify-{free_port()}"
    first = WorkerProcess(extra_env=FAST, queue=queue).start()
    second: Any = None
    try:
        current_app.send_task(DELIVER_TASK, queue=queue)
        wait_for(lambda: webhook.received, timeout=60, what="the first worker's request")
        assert first.process is not None
        first.process.send_signal(signal.SIGKILL)  # mid-request, before it marks anything
        first.process.wait(timeout=10)
        delivery = Delivery.objects.get()
        assert (delivery.status, delivery.attempts) == (DeliveryStatus.PENDING, 1)
        second = WorkerProcess(extra_env=FAST, queue=queue).start()
        sent = wait_for(
            lambda: Delivery.objects.filter(status=DeliveryStatus.SENT).first(),
            timeout=60,
            what="the sweep to redeliver:\n" + second.log(),
        )
        time.sleep(4)  # more sweeps and a lease's length: nothing is sent again
    finally:
        webhook.release.set()
        for worker in (first, second):
            if worker is not None:
                worker.stop()
    assert sent.attempts == 2
    assert len(webhook.received) == 2  # the killed worker's request, then the one answered
    assert all(request.verified for request in webhook.received)
    assert webhook.received[0].json["sf"]["id"] == webhook.received[1].json["sf"]["id"]
    assert Delivery.objects.get().status == DeliveryStatus.SENT
