"""Celery interfaces of the tasks app: take ids, call one service, return."""

from __future__ import annotations

from celery import shared_task

from tasks_app.workers import worker_probe_answer


@shared_task(bind=True, name="tasks_app.worker_probe")
def worker_probe_task(self, probe_id: int) -> bool:  # type: ignore[no-untyped-def]
    return worker_probe_answer(probe_id=probe_id, hostname=self.request.hostname or "inline")
