"""The unit page tells the truth live: an open page follows the unit without a reload.

A unit runs in a thread of the test process (a scripted model that waits, at its
second step, until the page is open); its trace, the gate's verdict and the task's
moves reach the page through the web process's websocket, as from a worker. Database
work happens in threads of its own: Playwright's loop runs in the test's thread.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest
from django.contrib.auth.models import User
from django.db import connection
from playwright.sync_api import Browser, Page, expect

from agents_app.tests.runtime_helpers import ScriptedModel
from conftest import grant
from sf_core.actors import Actor
from tasks_app.engine.merge_queue import merge_enqueue, merge_queue_run
from tasks_app.engine.replaying import demo_repo_create
from tasks_app.models import Task, Unit
from tasks_app.tests.test_engine import run_next, start, task_spec, writes
from tests.browser.conftest import doc_shot, logged_in_page
from tests.processes import WebProcess

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]
T = TypeVar("T")
WAIT_MS = 30_000


class WaitingModel(ScriptedModel):
    """A scripted model that stops before its second answer until ``release`` is set,
    as a real model does while it reads a prompt: the unit is running, one step done."""

    def __init__(self, *steps: Any) -> None:
        super().__init__(*steps)
        self.waiting, self.release = threading.Event(), threading.Event()

    def __call__(self, **kwargs: Any) -> Any:
        if len(self.calls) == 1:
            self.waiting.set()
            assert self.release.wait(60), "the test never released the model"
        return super().__call__(**kwargs)


def in_thread(work: Callable[[], T]) -> T:
    """Run ORM work off the test's thread (Playwright's loop runs there), closing the
    thread's database connection after."""
    result: list[T] = []

    def run() -> None:
        try:
            result.append(work())
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(120)
    assert result, "the work in the thread failed (see the log)"
    return result[0]


def in_background(work: Callable[[], object]) -> threading.Thread:
    def run() -> None:
        try:
            work()
        finally:
            connection.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return demo_repo_create(tmp_path / "greet")


@pytest.fixture
def session_of(repo: Path, user: User) -> Any:
    """A session whose one task waits for review under ``normal`` (``user`` approves)."""
    session, _ = start(repo, task_spec(), profile="normal")
    grant(user, session.project, "approver")
    return session


def open_unit(browser: Browser, web: WebProcess, user: User, unit_id: int) -> Page:
    page = logged_in_page(browser, web, user, "/")
    page.goto(f"{web.url}/units/{unit_id}/")
    expect(page.locator("#unit-state")).to_be_visible()
    return page


def test_a_failing_unit_shows_its_tokens_verification_and_reason_live(
    session_of: Any, user: User, web: WebProcess, browser: Browser
) -> None:
    model = WaitingModel(*writes("goodbye"))  # the verify command wants "hello"
    first = in_background(lambda: run_next(session_of, model))
    try:
        assert model.waiting.wait(60), "the unit never reached its second step"
        watch_a_unit_fail(session_of, model, first, user, web, browser)
    finally:
        model.release.set()
        first.join(60)


def watch_a_unit_fail(
    session_of: Any,
    model: WaitingModel,
    first: threading.Thread,
    user: User,
    web: WebProcess,
    browser: Browser,
) -> None:
    unit_id = in_thread(lambda: Unit.objects.get(task__plan__session=session_of).pk)
    page = open_unit(browser, web, user, unit_id)
    state = page.locator("#unit-state")
    # Running, one model step done: the header counts it (the unit's row does not yet).
    expect(state.locator("[data-unit-tokens]")).to_have_text("50 in / 10 out tokens")
    expect(page.locator("#unit-verification")).to_be_hidden()
    expect(page.locator("#followup-send")).to_have_text("Send to the running agent")

    model.release.set()  # the unit ends: its verify command fails

    expect(state.locator("[data-unit-status]")).to_have_text("unit failed", timeout=WAIT_MS)
    verification = page.locator("#unit-verification")
    expect(verification).to_be_visible()
    expect(verification.locator("h2")).to_have_text("Verification failed")
    expect(verification).to_contain_text("grep -q hello hello.txt")
    expect(state.locator("[data-unit-tokens]")).to_have_text("100 in / 20 out tokens")
    expect(state.locator("[data-unit-reason]")).to_have_text("verification failed (retry 1 of 3)")
    # The follow-up box follows the unit's end: the next attempt reads a message now.
    expect(page.locator("#followup-send")).to_have_text("Send for the next attempt")
    doc_shot(page, "11-unit-failed")

    # The next attempt starts and waits for review: this page keeps attempt 1's reason
    # and says where the task is now, with no review buttons for attempt 1's diff.
    first.join(60)
    in_thread(lambda: run_next(session_of, ScriptedModel(*writes("hello"))))
    latest = in_thread(lambda: Unit.objects.get(task__plan__session=session_of, attempt=2).pk)
    stale = state.locator(f'[data-stale-attempt="{latest}"]')
    expect(stale).to_be_visible(timeout=WAIT_MS)
    expect(state.locator("[data-task-status]")).to_have_text("review")
    expect(state.locator("[data-unit-reason]")).to_have_text(
        "attempt 1: verification failed (retry 1 of 3)"
    )
    expect(page.locator("#approve-merge")).to_have_count(0)
    stale.locator("a").click()
    page.wait_for_url(f"{web.url}/units/{latest}/")
    expect(page.locator("#approve-merge")).to_be_visible()


def test_the_merge_queue_box_follows_the_merge(
    session_of: Any, user: User, web: WebProcess, browser: Browser
) -> None:
    in_thread(lambda: run_next(session_of, ScriptedModel(*writes("hello"))))
    task_id, unit_id = in_thread(
        lambda: Unit.objects.values_list("task_id", "pk").get(task__plan__session=session_of)
    )
    in_thread(lambda: merge_enqueue(task=Task.objects.get(pk=task_id), actor=Actor.of(user)).pk)
    page = open_unit(browser, web, user, unit_id)
    box = page.locator("#unit-merge")
    expect(box).to_have_attribute("data-merge-status", "queued")
    expect(box).to_contain_text("waiting for its turn")

    project_id = in_thread(lambda: session_of.project_id)
    assert in_thread(lambda: merge_queue_run(project_id=project_id)) == 1

    expect(page.locator("#unit-state [data-task-status]")).to_have_text("done", timeout=WAIT_MS)
    expect(box).to_have_attribute("data-merge-status", "merged")
    expect(box.locator("h2")).to_have_text("Merge queue: Merged")
    expect(box).to_contain_text("merged as")
    expect(box).not_to_contain_text("waiting for its turn")


@pytest.fixture
def reviewed_session(repo: Path, user: User, settings: Any) -> Any:
    """A session whose project's policy asks for an advisory model review (``user``
    approves); the review's deep model is the scripted one."""
    settings.SF_MODEL_DEEP = "openai/gpt-4o"
    policy = {"model_review": {"mode": "advisory"}}
    session, _ = start(repo, task_spec(), profile="normal", policy=policy)
    grant(user, session.project, "approver")
    return session


def test_the_model_review_card_appears_and_fills_in_live(
    reviewed_session: Any, user: User, web: WebProcess, browser: Browser
) -> None:
    """The page is open before the unit ends: no card. The unit verifies, the model
    reviews it, and its verdict, reasons and line comment appear without a reload."""
    comment = {"path": "hello.txt", "line": 2, "text": "say there, not world"}
    verdict = {"verdict": "request_changes", "reasons": "greet the reader", "comments": [comment]}
    model = WaitingModel(*writes("hello\nworld\n"), ("verdict", [("review_verdict", verdict)]))
    running = in_background(lambda: run_next(reviewed_session, model))
    try:
        assert model.waiting.wait(60), "the unit never reached its second step"
        unit_id = in_thread(lambda: Unit.objects.get(task__plan__session=reviewed_session).pk)
        page = open_unit(browser, web, user, unit_id)
        card = page.locator("#model-review")
        expect(card).to_be_hidden()

        model.release.set()  # the unit finishes, is verified, and the model reviews it

        expect(card).to_have_attribute("data-model-review", "request_changes", timeout=WAIT_MS)
        expect(card).to_be_visible()
        expect(card.locator("[data-verdict]")).to_have_text("requests changes")
        expect(card.locator("[data-reasons]")).to_have_text("greet the reader")
        expect(card.locator("[data-model-comment]")).to_contain_text("hello.txt:2")
        expect(card.locator("[data-model-comment]")).to_contain_text("say there, not world")
        expect(page.locator("#unit-state [data-task-status]")).to_have_text("review")
    finally:
        model.release.set()
        running.join(60)
