"""Live session page: badge, axis controls, pending steering and timeline over Channels."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs

from django.shortcuts import get_object_or_404
from django.template.loader import render_to_string

from agents_app.access import Action, require
from agents_app.models import AgentSession
from sf_core.consumers import LivePartialConsumer
from sf_core.live import Groups

SESSION_PARTIALS = ("badge", "axis-controls", "pending", "timeline")


class SessionConsumer(LivePartialConsumer):
    """The session page's live parts; other pages ask for some (``?parts=badge``)."""

    def resolve_groups(self) -> list[str]:
        self.session_id = int(self.scope["url_route"]["kwargs"]["session_id"])
        session = get_object_or_404(
            AgentSession.objects.select_related("project"), pk=self.session_id
        )
        require(self.scope["user"], session.project, Action.VIEW)
        query = parse_qs(self.scope.get("query_string", b"").decode())
        wanted = query.get("parts", [",".join(SESSION_PARTIALS)])[0].split(",")
        self.parts = tuple(part for part in SESSION_PARTIALS if part in wanted)
        return [Groups.session(self.session_id)]

    def render(self) -> str:
        return render_session_partials(self.session_id, self.parts)

    async def session_changed(self, event: dict[str, Any]) -> None:
        await self.push()


def render_session_partials(session_id: int, parts: tuple[str, ...] = SESSION_PARTIALS) -> str:
    """The session page's live parts, each with its id for htmx to swap."""
    from agents_app.views import session_context

    session = AgentSession.objects.select_related("project").get(pk=session_id)
    context = session_context(session)
    return "".join(render_to_string(_template(name), context) for name in parts)


def _template(part: str) -> str:
    if part == "badge":
        return "agents_app/_badge.html"
    return f"agents_app/session_detail.html#{part}"


class ApprovalsConsumer(LivePartialConsumer):
    """The approvals queue, live: a new ask or a review anywhere updates every page."""

    def resolve_groups(self) -> list[str]:
        # Everyone may listen: the queue each person is sent holds only the decisions
        # of projects they may view (``approvals_context``).
        return [Groups.APPROVALS]

    def render(self) -> str:
        from agents_app.gate.views import approvals_context

        return render_to_string(
            "agents_app/approvals.html#queue", approvals_context(self.scope["user"])
        )

    async def approvals_changed(self, event: dict[str, Any]) -> None:
        await self.push()
