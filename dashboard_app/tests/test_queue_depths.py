"""The worker panel counts what waits on each queue (sf_core.queues), from the broker."""

from __future__ import annotations

import uuid

import pytest
from celery import current_app
from django.template.loader import render_to_string
from django.test import override_settings

from dashboard_app.status import system_status
from sf_core.queues import WorkKind, queue_for, queues_all

pytestmark = pytest.mark.django_db


def test_the_worker_panel_shows_each_queues_depth() -> None:
    with override_settings(CELERY_TASK_DEFAULT_QUEUE=f"q-depth-{uuid.uuid4().hex[:8]}"):
        try:  # no worker serves these queues: what is sent stays there
            current_app.send_task("notify_app.deliver", queue=queue_for(WorkKind.NOTIFY))
            current_app.send_task("notify_app.deliver", queue=queue_for(WorkKind.NOTIFY))
            current_app.send_task(
                "tasks_app.merge_queue_run", args=[0], queue=queue_for(WorkKind.SHORT)
            )
            status = system_status()
        finally:
            with current_app.connection_for_write() as connection:
                for queue in queues_all():
                    connection.default_channel.queue_purge(queue)
    html = render_to_string("dashboard_app/dashboard.html#system-status", {"status": status})
    assert 'data-queue="units" data-waiting="0"' in html
    assert 'data-queue="short" data-waiting="1"' in html
    assert 'data-queue="notify" data-waiting="2"' in html
