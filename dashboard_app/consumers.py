"""The dashboard's live parts over websockets: system status and the session table."""

from __future__ import annotations

from typing import Any

from django.http import QueryDict
from django.template.loader import render_to_string

from agents_app.access import projects_visible
from dashboard_app.run_demo import run_demo_status
from dashboard_app.sessions import session_table
from dashboard_app.status import system_status
from sf_core.consumers import LivePartialConsumer
from sf_core.live import Groups


class SystemStatusConsumer(LivePartialConsumer):
    """Live database / broker / worker / native status for the dashboard.

    Worker start and stop arrive as group events. A worker killed with ``kill -9``
    sends nothing, so the consumer also refreshes on a timer to notice stale
    heartbeats.
    """

    refresh_always = True

    def resolve_groups(self) -> list[str]:
        return [Groups.SYSTEM_STATUS]

    def render(self) -> str:
        """The status panel, and the card of run.sh's demo (swapped by its id): the
        panel's refresh is what keeps "where the demo is" current."""
        status = render_to_string(
            "dashboard_app/dashboard.html#system-status", {"status": system_status()}
        )
        demo = run_demo_status(projects_visible(self.scope["user"]))
        card = render_to_string("dashboard_app/dashboard.html#run-demo", {"run_demo": demo})
        return status + card

    async def status_changed(self, event: dict[str, Any]) -> None:
        await self.push()


class SessionTableConsumer(LivePartialConsumer):
    """The dashboard's session table, re-rendered when any session or task changes.

    The page puts its query string (filters and page) on the websocket URL, so the
    table that comes back shows the same rows the page did."""

    def resolve_groups(self) -> list[str]:
        self.params = QueryDict(self.scope.get("query_string", b"").decode())
        # Task moves (and plans accepted or finished) reach the task boards' group;
        # session status, pause and axes reach SESSIONS.
        return [Groups.SESSIONS, Groups.ALL_TASKS]

    def render(self) -> str:
        return render_to_string(
            "dashboard_app/dashboard.html#session-table",
            {"table": session_table(self.params, self.scope["user"])},
        )

    async def sessions_changed(self, event: dict[str, Any]) -> None:
        await self.push()

    async def tasks_changed(self, event: dict[str, Any]) -> None:
        await self.push()
