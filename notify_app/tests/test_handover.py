"""After the commit: a Celery message by name to the workers, or the embedded thread."""

from __future__ import annotations

import time
from typing import Any

import pytest
from celery import current_app
from django.contrib.auth.models import User
from django.core import mail

from agents_app.models import Project
from notify_app import outbox
from notify_app.inline import inline_kick
from notify_app.models import Delivery, DeliveryStatus, NotificationPreference
from notify_app.outbox import DELIVER_TASK, notification_enqueue
from sf_core.notices import Notice, NoticeKind

REAL_HAND_OVER = outbox._hand_over  # before the autouse fixture replaces it


def _notice(project: Project, key: str) -> Notice:
    return Notice(kind=NoticeKind.TASK_FAILED, dedupe_key=key, project_id=project.pk, text="t")


@pytest.mark.django_db
def test_a_committed_notice_sends_the_deliver_task_by_name_once_committed(
    project: Project,
    settings: Any,
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: Any,
) -> None:
    settings.CELERY_TASK_ALWAYS_EAGER = False
    monkeypatch.setattr(outbox, "_hand_over", REAL_HAND_OVER)
    sent: list[tuple[str, str]] = []
    monkeypatch.setattr(
        current_app, "send_task", lambda name, queue, **_: sent.append((name, queue))
    )
    with django_capture_on_commit_callbacks() as callbacks:
        notification_enqueue(notice=_notice(project, "a"))
    assert sent == []  # nothing before the commit
    for callback in callbacks:
        callback()
    # Its own queue, never behind a unit (sf_core.queues).
    assert sent == [(DELIVER_TASK, f"{settings.CELERY_TASK_DEFAULT_QUEUE}.notify")]
    from notify_app.tasks import deliver_task

    assert deliver_task.name == DELIVER_TASK


@pytest.mark.django_db(transaction=True)
def test_embedded_mode_delivers_in_a_thread(project: Project, user: User) -> None:
    User.objects.filter(pk=user.pk).update(email="ada@example.com")
    NotificationPreference.objects.create(user=user, browser=False)
    notification_enqueue(notice=_notice(project, "b"))
    inline_kick()
    deadline = time.monotonic() + 10
    while not mail.outbox and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(mail.outbox) == 1
    assert Delivery.objects.get().status == DeliveryStatus.SENT
