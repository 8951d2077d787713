"""The live board through the Redis channel layer."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.db import database_sync_to_async

from agents_app.models import AgentSession
from conftest import websocket
from sf_core.actors import Actor
from tasks_app.lifecycle import task_transition
from tasks_app.models import Plan
from tasks_app.services import plan_accept
from tests.fake_provider import fake_provider, openai_text  # noqa: F401 - fixture

pytestmark = [pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]


def start(plan: Plan) -> None:
    plan_accept(plan=plan, actor=Actor.system("t"), autonomous=True)
    task_transition(
        task=plan.tasks.get(key="a"),
        to="in_progress",
        reason="unit 1",
        actor=Actor.system("worker"),
    )


async def receive_until(communicator, needle: str, seconds: float = 5) -> str:  # type: ignore[no-untyped-def]
    for _ in range(10):
        html = await communicator.receive_from(timeout=seconds)
        if needle in html:
            return html
    raise AssertionError(f"never received {needle!r}")


@pytest.mark.parametrize("query", ["", "?session={session}"])
async def test_a_transition_moves_the_card_live(
    session_cookie: bytes, diamond_plan: Plan, plan_session: AgentSession, query: str
) -> None:
    path = "/ws/tasks/" + query.format(session=plan_session.pk)
    communicator = websocket(path, cookie=session_cookie)
    connected, _ = await communicator.connect(timeout=LOADED)
    try:
        assert connected
        first = await communicator.receive_from(timeout=LOADED)
        assert 'id="task-board"' in first
        await database_sync_to_async(start)(diamond_plan)
        # The whole board or, on a session's board, the row and the badge apart.
        wanted = ['data-task="a" data-status="in_progress"']
        wanted += ['id="mode-badge"', 'data-run-control="autonomous"'] if query else []
        seen = ""
        for _ in range(10):
            seen += await communicator.receive_from(timeout=LOADED)
            if all(part in seen for part in wanted):
                break
        assert all(part in seen for part in wanted), seen[-2000:]
    finally:
        await communicator.disconnect()


async def test_anonymous_users_are_refused() -> None:
    communicator = websocket("/ws/tasks/")
    connected, _ = await communicator.connect()
    assert not connected
    await communicator.disconnect()


def plan_request_new(session: AgentSession) -> int:
    from tasks_app.models import PlanRequest
    from tasks_app.services import plans_changed

    request = PlanRequest.objects.create(session=session, intent="add a flag")
    plans_changed(session_id=session.pk)  # outside a transaction: sent at once
    return request.pk


def plan_request_fail(session: AgentSession, request_id: int) -> None:
    from tasks_app.models import PlanRequest
    from tasks_app.services import plans_changed

    PlanRequest.objects.filter(pk=request_id).update(
        status="failed", status_reason="the model could not be asked"
    )
    plans_changed(session_id=session.pk)


async def test_the_session_plans_slot_follows_plan_requests_live(
    session_cookie: bytes, plan_session: AgentSession
) -> None:
    communicator = websocket(f"/ws/sessions/{plan_session.pk}/plans/", cookie=session_cookie)
    connected, _ = await communicator.connect()
    try:
        assert connected
        first = await communicator.receive_from(timeout=5)
        assert first.strip().startswith('<ul id="plans-list"')
        assert "data-no-plans" in first
        request_id = await database_sync_to_async(plan_request_new)(plan_session)
        await receive_until(communicator, 'data-status="planning"')
        await database_sync_to_async(plan_request_fail)(plan_session, request_id)
        html = await receive_until(communicator, 'data-status="failed"')
        assert html.count("the model could not be asked") == 1
    finally:
        await communicator.disconnect()


SECRET = "AKIAZ7QJ3N5R8TXW2PLM"  # an AWS key id (not the documented example: kept)


def new_unit(session: AgentSession) -> int:
    from tasks_app.models import Unit
    from tasks_app.tests.conftest import make_plan, task_data

    plan = make_plan(session, task_data("stream"))
    return Unit.objects.create(task=plan.tasks.get(), attempt=1).pk


def new_unit_task(unit_id: int) -> int:
    from tasks_app.models import Unit

    return Unit.objects.values_list("task_id", flat=True).get(pk=unit_id)


async def test_the_unit_page_shows_what_the_model_is_writing_redacted(
    session_cookie: bytes,
    agent_session: AgentSession,
    fake_provider: Any,  # noqa: F811
) -> None:
    from tasks_app.engine.unit import _streamed

    unit_id = await database_sync_to_async(new_unit)(agent_session)
    words = f"Reading the config: the key is {SECRET}, so I will not print it. " * 2
    fake_provider.answer(dataclasses.replace(openai_text(words), chunk_delay=0.05))
    communicator = websocket(f"/ws/units/{unit_id}/", cookie=session_cookie)
    connected, _ = await communicator.connect()
    try:
        assert connected
        assert 'id="unit-stream" class="streaming" hidden' in await communicator.receive_from(5)
        task_id = await database_sync_to_async(new_unit_task)(unit_id)
        ask = _streamed(task_id, unit_id, time.monotonic() + 60)
        response = await sync_to_async(ask)(
            model="openai/qwen",
            messages=[{"role": "user", "content": "go"}],
            api_base=fake_provider.openai_base,
            api_key="x",
        )
        # The stream box is hidden again once the answer is complete: wait for that
        # frame (however slow the machine), not for a second of quiet.
        frames: list[str] = []

        def is_writing(frame: str) -> bool:
            return 'id="unit-stream"' in frame and "hidden" not in frame

        def done() -> bool:
            last = frames[-1] if frames else ""
            return (
                any(map(is_writing, frames)) and 'id="unit-stream"' in last and not is_writing(last)
            )

        async with asyncio.timeout(60):
            while not done():
                frames.append(await communicator.receive_from(timeout=60))
    finally:
        await communicator.disconnect()
    assert response.choices[0].message.content == words
    writing = [f for f in frames if 'id="unit-stream"' in f and "hidden" not in f]
    assert writing, frames
    assert "Reading the config" in writing[0]
    assert all(SECRET not in frame for frame in frames)
    assert any("REDACTED" in frame for frame in writing)
    assert "hidden" in [f for f in frames if 'id="unit-stream"' in f][-1]  # done: hidden


LOADED = 60  # seconds: a generous deadline for each message on a busy machine


def accept(plan: Plan) -> int:
    """The plan accepted without starting it; task a's id."""
    plan_accept(plan=plan, actor=Actor.system("t"), start=False)
    return plan.tasks.get(key="a").pk


def move_a(plan: Plan) -> None:
    task_transition(task=plan.tasks.get(key="a"), to="in_progress", reason="unit 1")


async def connected_board(session: AgentSession, cookie: bytes) -> Any:
    from sf_core.live import flush

    # What the test did before (an acceptance's broadcasts, one without a task: a whole
    # board) sent before the browser joins: under load the sender thread had them
    # arrive among the messages a test then sends, taken for the answer to one.
    await database_sync_to_async(flush)()
    communicator = websocket(f"/ws/tasks/?session={session.pk}", cookie=cookie)
    connected, _ = await communicator.connect(timeout=LOADED)
    assert connected
    assert 'id="task-board"' in await communicator.receive_from(timeout=LOADED)
    return communicator


async def test_a_change_sends_its_rows_and_the_totals_rendered_once_for_every_browser(
    session_cookie: bytes,
    diamond_plan: Plan,
    plan_session: AgentSession,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tasks_app.surfaces.consumers import TaskBoardConsumer

    renders: list[int] = []
    render_change = TaskBoardConsumer.render_change

    def counted(self: TaskBoardConsumer, task_id: int, shown: frozenset[int]) -> tuple[str, ...]:
        renders.append(task_id)
        return render_change(self, task_id, shown)

    monkeypatch.setattr(TaskBoardConsumer, "render_change", counted)
    task_id = await database_sync_to_async(accept)(diamond_plan)
    ids = await database_sync_to_async(lambda: dict(diamond_plan.tasks.values_list("key", "pk")))()
    browsers = [await connected_board(plan_session, session_cookie) for _ in range(3)]
    try:
        await database_sync_to_async(move_a)(diamond_plan)
        # The totals, then a's row and its dependents' (their blockers), one message each.
        received = [
            [await browser.receive_from(timeout=LOADED) for _ in range(4)] for browser in browsers
        ]
    finally:
        for browser in browsers:
            await browser.disconnect()
    assert received == [received[0]] * 3, "every browser gets the same messages"
    assert renders == [task_id], "rendered once for the three browsers"
    totals, *rows = received[0]
    assert all('id="task-board"' not in html for html in received[0])
    assert totals.lstrip().startswith('<section id="board-totals"')
    assert 'id="board-warnings"' in totals
    assert "<tr" not in totals
    assert 'data-count="in_progress">in_progress 1<' in totals
    for row, key in zip(rows, "abc", strict=True):
        assert row.strip().startswith(f'<tr id="task-{ids[key]}"'), "a message is one row"
        assert row.strip().endswith("</tr>")
        assert row.count("<tr") == 1
    assert 'data-status="in_progress"' in rows[0]


async def test_a_browser_that_missed_a_message_gets_the_whole_board(
    session_cookie: bytes,
    diamond_plan: Plan,
    plan_session: AgentSession,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from channels.layers import get_channel_layer

    from sf_core.live import SEQUENCE as STAMP
    from sf_core.live import Groups

    task_id = await database_sync_to_async(accept)(diamond_plan)
    browser = await connected_board(plan_session, session_cookie)
    group = Groups.tasks(plan_session.pk)
    layer = get_channel_layer()
    try:
        for number, whole in ((1, False), (2, False), (4, True), (3, False)):
            message = {"type": "tasks.changed", "task_id": task_id, STAMP: ["w1", group, number]}
            await layer.group_send(group, message)
            # The whole board in one message; else the totals and the rows a touches.
            received = [
                await browser.receive_from(timeout=LOADED) for _ in range(1 if whole else 4)
            ]
            assert [('id="task-board"' in html) for html in received] == [whole] * len(received)
        assert await browser.receive_nothing(timeout=1)
    finally:
        await browser.disconnect()


async def test_a_session_change_sends_the_badge_alone(
    session_cookie: bytes, diamond_plan: Plan, plan_session: AgentSession
) -> None:
    from agents_app.models import AgentSession as Session
    from sf_core.live import Groups, broadcast

    def pause() -> None:
        Session.objects.filter(pk=plan_session.pk).update(model_mode="fast")
        broadcast(Groups.session(plan_session.pk), "session.changed")

    await database_sync_to_async(accept)(diamond_plan)
    browser = await connected_board(plan_session, session_cookie)
    try:
        await database_sync_to_async(pause)()
        # A whole board may come first (the connect render or the periodic refresh, on
        # a slow machine after the change, holding the new badge too): the badge alone
        # must still follow.
        for _ in range(10):
            html = await receive_until(browser, 'data-model-mode="fast"', LOADED)
            if html.lstrip().startswith('<span id="mode-badge"'):
                break
    finally:
        await browser.disconnect()
    assert html.lstrip().startswith('<span id="mode-badge"')
    assert "task-" not in html


async def test_changes_that_share_one_render_send_it_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Events that arrive while a change's render runs share it (SharedRenders): the
    browser gets its messages once, and again only after something else was sent."""
    from sf_core.consumers import SHARED_RENDERS
    from tasks_app.surfaces.consumers import TaskBoardConsumer

    shared = ("<section id='board-totals'></section>", '<tr id="task-7"></tr>')

    async def render(key: Any, since: float, render: Any) -> tuple[str, ...]:
        return shared

    sent: list[str] = []
    consumer = TaskBoardConsumer()
    consumer.session_id, consumer.statuses, consumer.page = 1, [], "1"
    consumer.last_html = '<div id="task-board"><tr id="task-7" data-task="a"></div>'

    async def send(text_data: str) -> None:
        sent.append(text_data)

    async def push(event: Any = None) -> None:
        sent.append("board")

    monkeypatch.setattr(SHARED_RENDERS, "render", render)
    monkeypatch.setattr(consumer, "send", send)
    monkeypatch.setattr(consumer, "_push_since", lambda since: push())
    for _ in range(3):
        await consumer.tasks_changed({"type": "tasks.changed", "task_id": 7})
    assert sent == list(shared)
    await consumer.tasks_changed({"type": "tasks.changed"})  # no task: the whole board
    await consumer.tasks_changed({"type": "tasks.changed", "task_id": 7})
    assert sent == [*shared, "board", *shared]


def ask_approval(session: AgentSession) -> None:
    """A tool call waiting for a person, announced as the gate announces one."""
    from sf_core.live import Groups, broadcast
    from tasks_app.tests.test_headless_watch import decision

    asked = decision(session)
    broadcast(Groups.APPROVALS, "approvals.changed", decision_id=asked.pk, session_id=session.pk)


async def test_an_approval_asked_sends_the_totals_alone(
    session_cookie: bytes, diamond_plan: Plan, plan_session: AgentSession
) -> None:
    """No task moved (the unit that asks ends later, or the decision is rejected): the
    board's "approvals" follows the approvals group, its totals alone."""
    await database_sync_to_async(accept)(diamond_plan)
    browser = await connected_board(plan_session, session_cookie)
    try:
        await database_sync_to_async(ask_approval)(plan_session)
        # A whole board may come first (the periodic refresh): the totals alone follow.
        for _ in range(10):
            html = await receive_until(browser, 'data-approvals="1"', LOADED)
            if html.lstrip().startswith('<section id="board-totals"'):
                break
    finally:
        await browser.disconnect()
    assert html.lstrip().startswith('<section id="board-totals"')
    assert "<tr" not in html


def send_followup(unit_id: int, user: Any) -> None:
    from conftest import grant
    from tasks_app.features.followups.services import followup_send
    from tasks_app.models import Unit

    unit = Unit.objects.select_related("task__plan__session__project").get(pk=unit_id)
    grant(user, unit.task.plan.session.project, "operator")
    followup_send(text="Mind the expired tokens.", actor=Actor.of(user), task=unit.task)


async def test_a_followup_sent_anywhere_shows_on_the_open_unit_page(
    session_cookie: bytes, agent_session: AgentSession, user: Any
) -> None:
    """Sent from the board, the CLI or another browser: the unit page left open lists it."""
    unit_id = await database_sync_to_async(new_unit)(agent_session)
    communicator = websocket(f"/ws/units/{unit_id}/", cookie=session_cookie)
    connected, _ = await communicator.connect(timeout=LOADED)
    try:
        assert connected
        assert "No follow-ups yet." in await communicator.receive_from(timeout=LOADED)
        await database_sync_to_async(send_followup)(unit_id, user)
        html = await receive_until(communicator, "Mind the expired tokens.", LOADED)
    finally:
        await communicator.disconnect()
    assert 'id="followups-list"' in html
    assert "waiting for the next attempt" in html
