"""A real Celery worker process, a task enqueued from Django, its write in PostgreSQL."""

from __future__ import annotations

import pytest
from django.db import transaction

from tasks_app.models import Worker, WorkerProbe
from tasks_app.tasks import worker_probe_task
from tests.processes import WorkerProcess, wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def registered(worker: WorkerProcess) -> Worker | None:
    return Worker.objects.filter(hostname=worker.hostname).first()


def test_a_task_enqueued_from_django_is_written_by_the_worker(
    worker_process: WorkerProcess,
) -> None:
    wait_for(lambda: registered(worker_process), timeout=60, what="the worker to register")

    with transaction.atomic():
        probe = WorkerProbe.objects.create()
        transaction.on_commit(
            lambda: worker_probe_task.apply_async(args=[probe.pk], queue=worker_process.queue)
        )

    def answered() -> bool:
        probe.refresh_from_db()
        return probe.answered_at is not None

    wait_for(answered, timeout=30, what="the worker to answer the probe:\n" + worker_process.log())
    assert probe.answered_by == worker_process.hostname


def test_the_worker_heartbeats_and_records_its_shutdown(worker_process: WorkerProcess) -> None:
    worker = wait_for(lambda: registered(worker_process), timeout=60, what="registration")
    assert isinstance(worker, Worker)
    first_beat = worker.last_heartbeat_at

    def beat_again() -> bool:
        worker.refresh_from_db()
        return worker.last_heartbeat_at > first_beat

    wait_for(beat_again, timeout=15, what="a heartbeat")
    assert worker.stopped_at is None

    assert worker_process.stop() == 0
    worker.refresh_from_db()
    assert worker.stopped_at is not None
