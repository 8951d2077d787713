"""The dashboard's live system status over a websocket."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from django.conf import settings
from django.template.loader import render_to_string

from dashboard_app.status import system_status
from sf_core.consumers import LivePartialConsumer
from sf_core.live import Groups


class SystemStatusConsumer(LivePartialConsumer):
    """Live database / broker / worker / native status for the dashboard.

    Worker start and stop arrive as group events. A worker killed with ``kill -9``
    sends nothing, so the consumer also refreshes on a timer to notice stale
    heartbeats.
    """

    refresh_task: asyncio.Task[None] | None = None

    def resolve_groups(self) -> list[str]:
        return [Groups.SYSTEM_STATUS]

    def render(self) -> str:
        return render_to_string(
            "dashboard_app/dashboard.html#system-status", {"status": system_status()}
        )

    async def connect(self) -> None:
        await super().connect()
        if self.live_groups:
            self.refresh_task = asyncio.create_task(self._refresh_forever())

    async def disconnect(self, code: int) -> None:
        if self.refresh_task is not None:
            self.refresh_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.refresh_task
        await super().disconnect(code)

    async def status_changed(self, event: dict[str, Any]) -> None:
        await self.push()

    async def _refresh_forever(self) -> None:
        interval = settings.SF_STATUS_REFRESH.total_seconds()
        while True:
            await asyncio.sleep(interval)
            await self.push()
