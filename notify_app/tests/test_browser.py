"""Browser notifications: open pages of the person get each one over their websocket."""

from __future__ import annotations

import json

import pytest
from channels.db import database_sync_to_async
from django.contrib.auth.models import User
from django.test import Client

from agents_app.models import Project
from conftest import websocket
from notify_app.delivery import deliveries_run
from notify_app.models import NotificationPreference
from notify_app.outbox import notification_enqueue
from sf_core import live
from sf_core.consumers import CLOSE_UNAUTHENTICATED
from sf_core.notices import Notice, NoticeKind

pytestmark = [pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]


def _cookie(user: User) -> bytes:
    client = Client()
    client.force_login(user)
    return f"sessionid={client.cookies['sessionid'].value}".encode()


def _notify_and_deliver(project: Project, user: User) -> dict[str, int]:
    NotificationPreference.objects.create(user=user, email=False)
    notice = Notice(
        kind=NoticeKind.STUCK_LOOP, dedupe_key="s", project_id=project.pk, text="a loop", url="/u/"
    )
    notification_enqueue(notice=notice)
    counts = deliveries_run(worker="w")
    live.flush()
    return counts


async def test_an_open_page_hears_its_persons_notification(user: User, project: Project) -> None:
    cookie = await database_sync_to_async(_cookie)(user)
    communicator = websocket("/ws/notifications/", cookie=cookie)
    connected, _ = await communicator.connect()
    try:
        assert connected
        counts = await database_sync_to_async(_notify_and_deliver)(project, user)
        assert counts == {"sent": 1}
        note = json.loads(await communicator.receive_from(timeout=5))
        assert note["title"] == "SF · Stuck loop"
        assert (note["text"], note["url"], note["kind"]) == ("a loop", "/u/", "stuck_loop")
    finally:
        await communicator.disconnect()


async def test_an_anonymous_page_is_refused() -> None:
    communicator = websocket("/ws/notifications/")
    connected, code = await communicator.connect()
    assert not connected
    assert code == CLOSE_UNAUTHENTICATED
    await communicator.disconnect()
