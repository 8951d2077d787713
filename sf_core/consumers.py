"""Websocket consumers that push server-rendered partials for htmx to swap by id."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from channels.layers import InMemoryChannelLayer
from django.conf import settings
from django.core.exceptions import ObjectDoesNotExist, PermissionDenied
from django.http import Http404

# Close codes in the application range (4000-4999): the browser sees why it was refused.
CLOSE_UNAUTHENTICATED = 4401
CLOSE_FORBIDDEN = 4403


class LivePartialConsumer(AsyncWebsocketConsumer):
    """Authenticated consumer that joins groups and pushes one rendered partial.

    Subclasses name their groups (``live_groups``) and render their partial
    (``render``); every group event whose handler calls ``push`` re-renders it.

    Some changes send no event this process can hear, so the partial is also rendered
    again every ``SF_STATUS_REFRESH`` and sent when it changed: always where a
    subclass sets ``refresh_always`` (a worker killed with ``kill -9`` says nothing),
    and for every consumer in embedded mode, whose in-memory channel layer never hears
    the CLI, ``sf headless`` or any other process.
    """

    live_groups: list[str]
    refresh_always = False
    refresh_task: asyncio.Task[None] | None = None
    last_html: str | None = None

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
        if self.refresh_always or isinstance(self.channel_layer, InMemoryChannelLayer):
            self.refresh_task = asyncio.create_task(self._refresh_forever())

    async def disconnect(self, code: int) -> None:
        if self.refresh_task is not None:
            self.refresh_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.refresh_task
        for group in self.live_groups:
            await self.channel_layer.group_discard(group, self.channel_name)

    async def push(self, event: dict[str, Any] | None = None) -> None:
        html = await database_sync_to_async(self.render)()
        self.last_html = html
        await self.send(text_data=html)

    async def _refresh_forever(self) -> None:
        interval = settings.SF_STATUS_REFRESH.total_seconds()
        while True:
            await asyncio.sleep(interval)
            html = await database_sync_to_async(self.render)()
            if html != self.last_html:  # unchanged: nothing to swap, a field keeps its text
                self.last_html = html
                await self.send(text_data=html)

    def resolve_groups(self) -> list[str]:
        """Check access to what the URL names and return the groups to join."""
        raise NotImplementedError

    def render(self) -> str:
        raise NotImplementedError
