"""The live task board: a transition anywhere moves the card in every open browser.

A session's board, unfiltered, is sent whole on connect; after that a task's change
sends what it changed: the totals and the warnings, then the rows it touched among
those the browser's page shows (the task's ``tr#task-N``, its dependents', the rows
whose flags it can move: ``rows_touched``), each row in a message of its own, all
swapped by id (htmx's websocket extension swaps every top-level element out of band).
A row travels alone because htmx parses a message as body content, where a ``<tr>``
after other elements loses its tags; a message that is one ``<tr>`` is parsed as a
table's (tests/browser/test_board_pages.py). Those messages are rendered once per
change for every browser of the process (``SharedRenders``), ~2 KB instead of the
~35 KB board. A change without a task (a plan accepted), a change to a task the page
does not show, a filtered board, the board of all sessions, and a consumer that
missed a message (``missed_before``) get the whole partial; a browser that
reconnects gets it on connect.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Hashable
from datetime import datetime
from typing import Any
from urllib.parse import parse_qs

from django.shortcuts import get_object_or_404
from django.template.loader import render_to_string

from agents_app.access import Action, projects_visible, require
from agents_app.badge import badge_for
from agents_app.models import AgentSession
from sf_core.consumers import SHARED_RENDERS, LivePartialConsumer
from sf_core.live import Groups
from tasks_app.lifecycle import task_groups
from tasks_app.models import Unit
from tasks_app.selectors import (
    rows_touched,
    session_plan_requests,
    session_plans,
    task_board,
)
from tasks_app.surfaces.unit_views import unit_context
from tasks_app.surfaces.views import board_context, board_filters
from tasks_app.waiting import waiting_context


class TaskBoardConsumer(LivePartialConsumer):
    """The board, filtered and on the page the browser shows (its websocket URL carries
    the page's query string): a live update never sends it back to page 1."""

    last_change: tuple[str, ...] | None = None  # the change's messages sent last

    def resolve_groups(self) -> list[str]:
        query = parse_qs(self.scope.get("query_string", b"").decode())
        self.session_id, self.statuses = board_filters(
            (query.get("session") or [None])[0], query.get("status", [])
        )
        self.page = (query.get("page") or ["1"])[0]
        # The approvals group too: the totals count the calls waiting for a person.
        if self.session_id is None:
            return [Groups.ALL_TASKS, Groups.APPROVALS]
        _require_session_view(self.scope["user"], self.session_id)
        # The session group too: the board's badge follows the session's axes.
        return [Groups.tasks(self.session_id), Groups.session(self.session_id), Groups.APPROVALS]

    def render_key(self) -> Hashable:
        """One session's board is the same for everyone who may view the session (checked
        on connect, as every live consumer does); the board of all sessions shows only
        the projects each person may view, so it is theirs alone."""
        who = self.scope["user"].pk if self.session_id is None else None
        return ("tasks-board", self.session_id, tuple(self.statuses), self.page, who)

    def render(self) -> str:
        session = AgentSession.objects.get(pk=self.session_id) if self.session_id else None
        projects = projects_visible(self.scope["user"]) if session is None else None
        context = board_context(session, self.statuses, projects, page=self.page)
        html = render_to_string("tasks_app/board.html#board", context)
        if session is not None:
            html += render_to_string("agents_app/_badge.html", context)
        return html

    def render_change(self, task_id: int, shown: frozenset[int]) -> tuple[str, ...]:
        """The messages for a change to ``task_id``: the totals and warnings, then each
        row it touched among ``shown`` (``rows_touched``), one message per row: htmx
        parses a message as body content, where a ``<tr>`` after other elements is
        dropped (tags and all), while a message that is one ``<tr>`` is parsed as a
        table's. Its buttons carry this browser's page, as the whole board's do."""
        only = rows_touched(task_id, shown)
        board = task_board(session_id=self.session_id, only=only)
        # The row asks only whether the board is a session's (it links plans if not).
        context = {
            "board": board,
            "session": AgentSession(pk=self.session_id),
            "ws_query": self.ws_query(),
        }
        totals = render_to_string("tasks_app/board.html#totals", context)
        rows = (
            render_to_string("tasks_app/board.html#row", {**context, "row": row})
            for row in sorted(board.rows, key=lambda row: only.index(row.task.pk))
        )
        return (totals, *rows)

    def render_totals(self) -> str:
        """The totals and warnings alone (no row changed): an approval asked or decided."""
        projects = projects_visible(self.scope["user"]) if self.session_id is None else None
        board = task_board(
            session_id=self.session_id, statuses=self.statuses, projects=projects, only=()
        )
        context = {"board": board, "session": AgentSession(pk=self.session_id)}
        return render_to_string("tasks_app/board.html#totals", context)

    def render_badge(self) -> str:
        assert self.session_id is not None  # only a session's board has a badge
        session = AgentSession.objects.get(pk=self.session_id)
        context = {"session": session, "badge": badge_for(session)}
        return render_to_string("agents_app/_badge.html", context)

    def ws_query(self) -> str:
        page = f"&page={self.page}" if self.page.isdigit() and int(self.page) > 1 else ""
        return f"session={self.session_id}{page}"

    async def tasks_changed(self, event: dict[str, Any]) -> None:
        task_id = event.get("task_id")
        whole = self.session_id is None or self.statuses or self.last_html is None
        if self.missed_before(event) or whole or not isinstance(task_id, int):
            await self.push()
            return
        shown = rows_shown(self.last_html or "")
        if task_id not in shown:
            # A task this browser's page does not show (another page, or new): the whole
            # partial, as the board's own pagination renders it.
            await self.push()
            return
        key = ("tasks-board-change", self.session_id, task_id, self.page, shown)
        since = SHARED_RENDERS.since(event)
        messages = await SHARED_RENDERS.render(
            key, since, lambda: self.render_change(task_id, shown)
        )
        if messages is self.last_change:
            # This very render already went to this browser (events that came while it
            # ran share it), and nothing since: sending it again changes nothing.
            return
        self.last_change = messages
        for html in messages:
            await self.send(text_data=html)

    async def push(self, event: dict[str, Any] | None = None) -> None:
        self.last_change = None  # a change's render sent after the board is news again
        await super().push(event)

    async def approvals_changed(self, event: dict[str, Any]) -> None:
        """A tool call's approval asked for or decided: the totals alone (their
        "approvals"), if the decision is of this board's session (any, on the board of
        all sessions). The task's own move, if any, comes as ``tasks.changed``."""
        session_id = event.get("session_id")
        if self.session_id is not None and session_id not in (None, self.session_id):
            return
        if self.last_html is None:
            await self.push()
            return
        since = SHARED_RENDERS.since(event)
        key = self.render_key()
        html = await SHARED_RENDERS.render(("tasks-board-totals", key), since, self.render_totals)
        await self.send(text_data=html)

    async def session_changed(self, event: dict[str, Any]) -> None:
        """The session's axes or pause: the badge alone (a session's board only)."""
        if self.session_id is None or self.last_html is None:
            await self.push()
            return
        since = SHARED_RENDERS.since(event)
        html = await SHARED_RENDERS.render(
            ("tasks-board-badge", self.session_id), since, self.render_badge
        )
        await self.send(text_data=html)


ROW_ID = re.compile(r'<tr id="task-(\d+)"')


@functools.lru_cache(maxsize=64)
def rows_shown(board_html: str) -> frozenset[int]:
    """The tasks whose rows a rendered board holds (the same render is shared by every
    browser of a page: read once)."""
    return frozenset(int(found) for found in ROW_ID.findall(board_html))


UNIT_LIVE_PARTS = (
    "tasks_app/unit_detail.html#unit-state",
    "tasks_app/unit_detail.html#trace",
    "tasks_app/unit_detail.html#unit-verification",
    "tasks_app/unit_detail.html#unit-merge",
    "tasks_app/unit_detail.html#model-review",
    # What a follow-up sent now does: never "to the running agent" once the unit ended.
    "tasks_app/_followups.html#followups-list",
    "tasks_app/_followups.html#followup-target",
)


class UnitConsumer(LivePartialConsumer):
    """A unit's page: its state (tokens so far, the reason it ended), trace, verification
    output, merge-queue box, model review card and follow-ups (the messages, what one
    sent now does), streamed as events are recorded, the task moves and the review
    starts and ends (``review.changed``).
    The diff is page-only (its comment buttons depend on who looks)."""

    def resolve_groups(self) -> list[str]:
        self.unit_id = int(self.scope["url_route"]["kwargs"]["unit_id"])
        unit = get_object_or_404(
            Unit.objects.select_related("task__plan__session__project"), pk=self.unit_id
        )
        require(self.scope["user"], unit.task.plan.session.project, Action.VIEW)
        # The session's group too: the page's badge follows the session's axes.
        session_group = Groups.session(unit.task.plan.session_id)
        return [Groups.unit(self.unit_id), *task_groups(unit.task), session_group]

    def render_key(self) -> Hashable:
        return ("unit", self.unit_id)  # the same for everyone who may view the unit

    def render(self) -> str:
        related = ("task__plan__session", "model_review")
        unit = Unit.objects.select_related(*related).get(pk=self.unit_id)
        context = unit_context(unit)
        return "".join(render_to_string(part, context) for part in UNIT_LIVE_PARTS)

    async def trace_appended(self, event: dict[str, Any]) -> None:
        await self.push()

    async def review_changed(self, event: dict[str, Any]) -> None:
        """The model review stored its verdict, or acted on it (sent the task back)."""
        await self.push()

    async def unit_streaming(self, event: dict[str, Any]) -> None:
        """What the model has written of its current step (already redacted): only the
        stream box is swapped, not the whole trace."""
        html = render_to_string("tasks_app/unit_detail.html#stream", {"text": event["text"]})
        await self.send(text_data=html)

    async def unit_waiting(self, event: dict[str, Any]) -> None:
        """A model request sent (its time and tokens) or answered (none): only the
        waiting box is swapped; the page counts the seconds itself."""
        context: dict[str, Any] = {}
        if event["sent_at"]:
            context = waiting_context(datetime.fromisoformat(event["sent_at"]), event["tokens"])
        html = render_to_string("tasks_app/unit_detail.html#waiting", context)
        await self.send(text_data=html)

    async def tasks_changed(self, event: dict[str, Any]) -> None:
        await self.push()

    async def session_changed(self, event: dict[str, Any]) -> None:
        await self.push()


class SessionPlansConsumer(LivePartialConsumer):
    """The session page's plans slot: its list follows plan requests, plans and tasks."""

    def resolve_groups(self) -> list[str]:
        self.session_id = int(self.scope["url_route"]["kwargs"]["session_id"])
        _require_session_view(self.scope["user"], self.session_id)
        return [Groups.session(self.session_id), Groups.tasks(self.session_id)]

    def render_key(self) -> Hashable:
        return ("session-plans", self.session_id)

    def render(self) -> str:
        context = {
            "session": AgentSession.objects.get(pk=self.session_id),
            "plans": session_plans(self.session_id),
            "plan_requests": session_plan_requests(self.session_id),
        }
        return render_to_string("tasks_app/_session_plans.html#plans-list", context)

    async def tasks_changed(self, event: dict[str, Any]) -> None:
        await self.push()

    async def session_changed(self, event: dict[str, Any]) -> None:
        await self.push()


def _require_session_view(user: Any, session_id: int) -> None:
    session = get_object_or_404(AgentSession.objects.select_related("project"), pk=session_id)
    require(user, session.project, Action.VIEW)
