"""Celery interface of the notifications app: the registered name is what senders use."""

from __future__ import annotations

from celery import shared_task

from notify_app.delivery import deliveries_run


@shared_task(bind=True, name="notify_app.deliver")
def deliver_task(self) -> dict[str, int]:  # type: ignore[no-untyped-def]
    """Deliver what is due. Claims are rows, so duplicate messages are harmless."""
    return deliveries_run(worker=self.request.hostname or "worker")
