"""Real Celery workers: a notification is not held up by long agent units.

Two units (a ``sleep`` each, replayed) hold both slots of the units workers; a
notification sent meanwhile goes to its own queue (``sf_core.queues``), where the
notifications worker delivers it at once. On one queue it waited for a unit to end
(issue [6/8]: 5.5 minutes). The sweeps, which deliver too, are slowed to once every
five minutes so that only the queue can deliver within the bound.
"""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import override_settings

from agents_app.models import ProjectMembership, Role
from agents_app.services import project_create
from notify_app.models import Delivery, DeliveryStatus, NotificationPreference
from notify_app.outbox import _hand_over as hand_over  # the real one (conftest stubs it)
from notify_app.outbox import notification_enqueue
from notify_app.tests.conftest import SECRET, WebhookServer
from sf_core.notices import Notice, NoticeKind
from tasks_app.engine.replaying import demo_repo_create
from tasks_app.models import Unit
from tests.processes import WorkerProcess, free_port, wait_for
from tests.test_engine_workers import one_task_session, slow_trace

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]
QUIET_SWEEPS = {
    "SF_SWEEP_INTERVAL": "300s",
    "SF_NET_ALLOW_HOSTS": "127.0.0.1",  # the test's receiver, on loopback
    "SF_NOTIFY_WEBHOOK_TIMEOUT": "5s",
}
BOUND_SECONDS = 15  # generous on a loaded machine; the units run 60 s


def test_a_notification_is_delivered_while_long_units_hold_the_unit_slots(
    tmp_path: Path, user: User, webhook: WebhookServer
) -> None:
    repo = demo_repo_create(tmp_path / "repo")
    project = project_create(name="busy", repo_path=str(repo))
    ProjectMembership.objects.create(project=project, user=user, role=Role.ADMIN)
    NotificationPreference.objects.create(
        user=user, email=False, browser=False, webhook_url=webhook.url, webhook_secret=SECRET
    )
    queue = f"q-busy-{free_port()}"
    workers = [WorkerProcess(extra_env=QUIET_SWEEPS, queue=queue).start() for _ in range(2)]
    workers.append(WorkerProcess(extra_env=QUIET_SWEEPS, queue=queue, serves=(".notify",)).start())
    try:
        with override_settings(CELERY_TASK_DEFAULT_QUEUE=queue):
            for key in ("slow1", "slow2"):
                one_task_session(project, key, slow_trace(tmp_path, key, seconds=60), start=True)
            wait_for(
                lambda: Unit.objects.filter(status="running").count() == 2,
                timeout=120,
                what="both unit slots busy:\n" + workers[0].log(),
            )
            notification_enqueue(
                notice=Notice(
                    kind=NoticeKind.STUCK_LOOP, dedupe_key="busy", project_id=project.pk, text="x"
                )
            )
            sent_at = time.monotonic()
            hand_over()
        wait_for(
            lambda: Delivery.objects.filter(status=DeliveryStatus.SENT).exists(),
            timeout=BOUND_SECONDS,
            what="the delivery while both units run:\n" + workers[2].log(),
        )
        assert time.monotonic() - sent_at < BOUND_SECONDS
        assert Unit.objects.filter(status="running").count() == 2  # still holding the slots
        assert len(webhook.received) == 1
        assert webhook.received[0].verified
    finally:
        for worker in workers:
            worker.stop(signal.SIGKILL)
