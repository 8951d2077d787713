"""One running task is stopped from the browser, and nothing else of its session.

Cancel on the unit page cuts the model's answer while it is being written (a fake
provider over real HTTP, streaming a three-minute answer word by word): the unit ends
cancelled at once with the person's name and reason, its worktree kept, and the
session's other task still runs. Stop after this step on the board lets the current
model step and its tool calls finish, then pauses the task with its work, and Resume
puts it back. Units run in threads of the test process (``in_background``), as on a
worker; the pages follow them through the web process's websocket.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import override_settings
from playwright.sync_api import Browser, Page, expect

from agents_app.models import AgentSession
from agents_app.runtime import llm
from agents_app.runtime.llm import litellm_module
from agents_app.tests.runtime_helpers import ScriptedModel
from conftest import grant
from tasks_app.engine import unit as unit_module
from tasks_app.engine.replaying import demo_repo_create
from tasks_app.engine.unit import UnitOptions, unit_run
from tasks_app.models import ScheduleStatus, Task, TaskSchedule, TaskTransition, Unit
from tasks_app.tests.test_engine import MODEL, start, task_spec, writes
from tasks_app.workspaces import workspace_of
from tests.browser.conftest import doc_shot, logged_in_page
from tests.browser.test_unit_live import WAIT_MS, WaitingModel, in_background, in_thread
from tests.fake_provider import FakeProvider, openai_text
from tests.processes import WebProcess, wait_for

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def provider(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeProvider]:
    """Every mode's model is the fake provider (no fallback, no retries)."""
    fake = FakeProvider().start()
    monkeypatch.setattr(llm, "MAX_SERVER_RETRIES", 0)
    endpoint = {"api_base": fake.openai_base, "api_key": "sk-fake"}
    endpoints = {mode: endpoint for mode in ("fast", "smart", "deep")}
    try:
        with override_settings(SF_MODEL_FALLBACK="", SF_MODEL_ENDPOINTS=endpoints):
            yield fake
    finally:
        fake.stop()


@pytest.fixture
def two_tasks(tmp_path: Path, user: User) -> AgentSession:
    """A session of two independent tasks, both due; ``user`` may stop them."""
    repo = demo_repo_create(tmp_path / "greet")
    session, _ = start(repo, task_spec("slow"), task_spec("other"))
    AgentSession.objects.filter(pk=session.pk).update(driver="workers")
    grant(user, session.project, "operator")
    return session


def task_of(session: AgentSession, key: str) -> Task:
    return Task.objects.select_related("plan").get(plan__session=session, key=key)


def test_cancel_cuts_the_model_answer_and_stops_only_that_task(
    two_tasks: AgentSession, provider: FakeProvider, user: User, web: WebProcess, browser: Browser
) -> None:
    words = " ".join(f"w{number}" for number in range(900))  # 3 minutes at this pace
    provider.answer(dataclasses.replace(openai_text(words), chunk_delay=0.2))
    litellm_module()  # imported before the unit: it takes seconds on a busy machine
    slow_id = in_thread(lambda: task_of(two_tasks, "slow").pk)
    running = in_background(
        lambda: unit_run(task_id=slow_id, worker="test", options=UnitOptions(model=MODEL))
    )
    wait_for(lambda: provider.requests, timeout=60, what="the unit's model request")
    unit_id = in_thread(lambda: Unit.objects.get(task_id=slow_id).pk)
    page = logged_in_page(browser, web, user, f"/units/{unit_id}/")
    state = page.locator("#unit-state")
    expect(state.locator("[data-unit-status]")).to_have_text("unit running")
    expect(page.locator("#unit-stream")).to_be_visible(timeout=WAIT_MS)  # being written

    page.on("dialog", lambda dialog: dialog.accept())
    page.fill("#stop-reason", "wrong approach")
    clicked = time.monotonic()
    state.locator('button[data-action="cancel"]').click()

    expect(state.locator("[data-unit-status]")).to_have_text("unit cancelled", timeout=WAIT_MS)
    running.join(30)
    assert not running.is_alive(), "the unit still waits for the model's answer"
    assert time.monotonic() - clicked < 30  # the answer alone takes three minutes
    why = f"cancelled by {user.username}: wrong approach"
    expect(state.locator("[data-task-status]")).to_have_text("cancelled")
    expect(state.locator("[data-unit-reason]")).to_have_text(why)
    expect(state.locator('button[data-action="cancel"]')).to_have_count(0)
    offers_no_followup(page)
    doc_shot(page, "12-unit-cancelled")
    slow = in_thread(lambda: task_of(two_tasks, "slow"))
    assert in_thread(lambda: workspace_of(slow).path).is_dir()  # kept for inspection
    actor = in_thread(
        lambda: (
            TaskTransition.objects.filter(task=slow, to_status="cancelled")
            .values_list("actor_user__username", "reason")
            .get()
        )
    )
    assert actor == (user.username, why)
    # Nothing else stopped: the session runs, and its other task is due and runs.
    session = in_thread(lambda: AgentSession.objects.get(pk=two_tasks.pk))
    assert (session.paused, session.interrupt_requested, session.status) == (
        False,
        False,
        "active",
    )
    other_id = in_thread(lambda: task_of(two_tasks, "other").pk)
    due = in_thread(lambda: TaskSchedule.objects.get(task_id=other_id).status)
    assert due == ScheduleStatus.DUE
    report = in_thread(
        lambda: unit_run(
            task_id=other_id,
            worker="test",
            options=UnitOptions(model=MODEL, completion=ScriptedModel(*writes("hello"))),
        )
    )
    assert getattr(report, "task_status", None) == "done"  # trusted: merged


def offers_no_followup(page: Page) -> None:
    """The follow-up box, left open, no longer offers the running agent: a cancelled
    task takes no message (final), and the box says so without a reload."""
    expect(page.locator("#followup-send")).to_have_count(0)
    target = page.locator("#followup-target")
    expect(target).to_have_attribute("data-offer", "final")
    expect(target.locator("[data-followup-hint]")).to_contain_text("cancelled, which is final")
    expect(page.locator("#followup-text")).to_be_hidden()


def test_stop_after_this_step_pauses_the_task_with_its_work_and_resume_goes_on(
    two_tasks: AgentSession,
    user: User,
    web: WebProcess,
    browser: Browser,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The unit's runtime row (where the stop was asked) is released after the task's
    # move: held here, so the board renders the paused task while the row is still there.
    released, settle = threading.Event(), unit_module._settle_and_release

    def held(task: Task, unit: Unit) -> None:
        assert released.wait(60), "the test never let the unit release its runtime"
        settle(task, unit)

    monkeypatch.setattr(unit_module, "_settle_and_release", held)
    model = WaitingModel(
        ("first", [("write_file", {"path": "notes.txt", "content": "a"})]),
        ("second", [("write_file", {"path": "hello.txt", "content": "hello"})]),
        ("done", [("finish", {"summary": "wrote it"})]),
    )
    slow_id = in_thread(lambda: task_of(two_tasks, "slow").pk)
    options = UnitOptions(model=MODEL, completion=model)
    running = in_background(lambda: unit_run(task_id=slow_id, worker="test", options=options))
    try:
        assert model.waiting.wait(60), "the unit never reached its second step"
        page = logged_in_page(browser, web, user, f"/tasks/?session={two_tasks.pk}")
        row = page.locator('tr[data-task="slow"]')
        expect(row).to_have_attribute("data-status", "in_progress")
        row.locator('button[data-action="stop"]').click()
        expect(row.locator('[data-stop-asked="after_step"]')).to_be_visible(timeout=WAIT_MS)
        expect(row.locator('button[data-action="stop"]')).to_have_count(0)
    finally:
        model.release.set()  # the second step's answer comes, and its tool call runs
    try:
        expect(row).to_have_attribute("data-status", "paused", timeout=WAIT_MS)  # live
        # The stop was honoured: the paused row no longer says it is coming.
        expect(row.locator("[data-stop-asked]")).to_have_count(0)
        expect(row.locator('button[data-action="resume"]')).to_be_visible()
        expect(row.locator("[data-heartbeat-age]")).to_be_visible()  # its runtime, held
    finally:
        released.set()
    running.join(60)
    # The runtime released: the open board drops its worker and heartbeat at once.
    expect(row.locator("[data-heartbeat-age]")).to_have_count(0, timeout=WAIT_MS)
    doc_shot(page, "13-board-paused")
    assert len(model.calls) == 2  # never asked for a third step
    slow = in_thread(lambda: task_of(two_tasks, "slow"))
    assert slow.status_reason == f"stopped after its step by {user.username}"
    worktree = in_thread(lambda: workspace_of(slow).path)
    assert (worktree / "hello.txt").read_text() == "hello"  # its work kept
    unit = in_thread(lambda: Unit.objects.get(task_id=slow_id))
    assert (unit.status, unit.summary) == ("cancelled", slow.status_reason)

    row.locator('button[data-action="resume"]').click()
    expect(row).to_have_attribute("data-status", "todo", timeout=WAIT_MS)
    expect(page.locator("[data-recover-error]")).to_have_count(0)
