"""Websocket consumers that push server-rendered partials for htmx to swap by id."""

from __future__ import annotations

from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.core.exceptions import ObjectDoesNotExist, PermissionDenied
from django.http import Http404

# Close codes in the application range (4000-4999): the browser sees why it was refused.
CLOSE_UNAUTHENTICATED = 4401
CLOSE_FORBIDDEN = 4403


class LivePartialConsumer(AsyncWebsocketConsumer):
    """Authenticated consumer that joins groups and pushes one rendered partial.

    Subclasses name their groups (``live_groups``) and render their partial
    (``render``); every group event whose handler calls ``push`` re-renders it.
    """

    live_groups: list[str]

    async def connect(self) -> None:
        self.live_groups = []
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close(code=CLOSE_UNAUTHENTICATED)
            return
        try:
            self.live_groups = await database_sync_to_async(self.resolve_groups)()
        except (PermissionDenied, Http404, ObjectDoesNotExist):
            await self.close(code=CLOSE_FORBIDDEN)
            return
        for group in self.live_groups:
            await self.channel_layer.group_add(group, self.channel_name)
        await self.accept()
        await self.push()

    async def disconnect(self, code: int) -> None:
        for group in self.live_groups:
            await self.channel_layer.group_discard(group, self.channel_name)

    async def push(self, event: dict[str, Any] | None = None) -> None:
        html = await database_sync_to_async(self.render)()
        await self.send(text_data=html)

    def resolve_groups(self) -> list[str]:
        """Check access to what the URL names and return the groups to join."""
        raise NotImplementedError

    def render(self) -> str:
        raise NotImplementedError
