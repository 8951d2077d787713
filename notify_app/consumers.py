"""Browser notifications: every open SF page of a person joins their group and gets
each notification as JSON; the page's script shows a toast and, when the person
allowed it, a Notification API popup (static/notify_app/notify.js)."""

from __future__ import annotations

import json
from typing import Any

from channels.generic.websocket import AsyncWebsocketConsumer

from sf_core.consumers import CLOSE_UNAUTHENTICATED
from sf_core.live import Groups


class NotificationConsumer(AsyncWebsocketConsumer):
    group: str | None = None

    async def connect(self) -> None:
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close(code=CLOSE_UNAUTHENTICATED)
            return
        self.group = Groups.user(user.pk)
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()

    async def disconnect(self, code: int) -> None:
        if self.group is not None:
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def notification_new(self, event: dict[str, Any]) -> None:
        fields = ("id", "kind", "title", "text", "url")
        await self.send(text_data=json.dumps({name: event.get(name) for name in fields}))
