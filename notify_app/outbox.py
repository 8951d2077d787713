"""The outbox: a notice becomes one ``Notification`` and its ``Delivery`` rows, written
in the transaction of the state change it reports; delivery starts after the commit."""

from __future__ import annotations

import logging
import uuid
from typing import Any

from celery import current_app
from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.urls import reverse

from notify_app.inline import inline_kick
from notify_app.models import Delivery, Notification
from notify_app.recipients import channels_of, preference_of, recipients
from sf_core.notices import Notice, NoticeKind
from sf_core.queues import WorkKind, queue_for

logger = logging.getLogger("sf.notify")

# The Celery task's registered name (notify_app/tasks.py): sent by name, like the engine.
DELIVER_TASK = "notify_app.deliver"


def notification_enqueue(*, notice: Notice) -> Notification | None:
    """Record ``notice`` once (by its dedupe key) with a delivery per recipient and
    channel. Returns the new row, or None when the key was already recorded.

    ``get_or_create`` runs the insert in a savepoint: a concurrent duplicate raises
    inside it and is read back, without aborting the caller's transaction."""
    with transaction.atomic():
        notification, created = Notification.objects.get_or_create(
            dedupe_key=notice.dedupe_key,
            defaults={
                "kind": notice.kind.value,
                "project_id": notice.project_id,
                "session_id": notice.session_id,
                "task_id": notice.task_id,
                "unit_id": notice.unit_id,
                "text": notice.text,
                "url": notice.url,
                "payload": notice.payload,
            },
        )
        if not created:
            return None
        if notice.project_id is not None:
            Delivery.objects.bulk_create(
                Delivery(notification=notification, user=recipient.user, channel=channel)
                for recipient in recipients(kind=notice.kind, project_id=notice.project_id)
                for channel in recipient.channels
            )
        deliveries_kick()
    return notification


def notification_test(*, user: User) -> Notification:
    """A person's "send a test notification": to them alone, over each of their channels."""
    with transaction.atomic():
        notification = Notification.objects.create(
            kind=NoticeKind.TEST.value,
            dedupe_key=f"test:{user.pk}:{uuid.uuid4().hex}",
            project=None,
            text=f"Test notification for {user.get_username()}: your channels work.",
            url=reverse("notify-preferences"),
        )
        channels = channels_of(user, preference_of(user))
        Delivery.objects.bulk_create(
            Delivery(notification=notification, user=user, channel=channel) for channel in channels
        )
        deliveries_kick()
    return notification


def on_notice_raised(sender: object, *, notice: Notice, **_: Any) -> None:
    """The ``notice_raised`` receiver, in the sender's transaction."""
    notification_enqueue(notice=notice)


def deliveries_kick() -> None:
    """After the commit, have a worker deliver what is due (a thread of this process
    when embedded, ``notify_app.inline``). A lost message costs nothing: the sweep
    delivers it later."""
    transaction.on_commit(_hand_over)


def _hand_over() -> None:
    if settings.CELERY_TASK_ALWAYS_EAGER:
        inline_kick()
        return
    queue = queue_for(WorkKind.NOTIFY)  # read now: tests point it at their worker
    try:
        current_app.send_task(DELIVER_TASK, queue=queue)
    except Exception:  # the broker may be down; the outbox still has every row
        logger.warning("could not send %s; the sweep will deliver", DELIVER_TASK, exc_info=True)
