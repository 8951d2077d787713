"""Signs of life while waiting: the board says a task waits for a worker and where it
is in the queue; the unit page says the model is being waited for, since when and with
how many tokens, counting live, until the answer starts.

Two tasks are sent to the workers (``dispatch``, through the real broker) and no worker
is free: both wait, first and second in the queue. A worker (a thread of the test
process) then takes the first; its model (a fake provider over real HTTP) reads the
prompt for several seconds before it answers.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Browser, expect

from agents_app.models import AgentSession
from agents_app.runtime.llm import litellm_module
from conftest import grant
from tasks_app.engine.dispatch import dispatch
from tasks_app.engine.replaying import demo_repo_create
from tasks_app.engine.unit import UnitOptions, unit_run
from tasks_app.models import Task, Unit
from tasks_app.tests.test_engine import MODEL, start, task_spec
from tests.browser.conftest import doc_shot, logged_in_page
from tests.browser.test_task_stop import provider  # noqa: F401 - fixture
from tests.browser.test_unit_live import WAIT_MS, in_background, in_thread
from tests.fake_provider import FakeProvider, call, openai_calls
from tests.processes import WebProcess, wait_for

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]
READING = 8.0  # seconds the model reads the prompt before it answers


@pytest.fixture
def sent(tmp_path: Path, user: User) -> AgentSession:
    """A session of two tasks sent to the workers, which none has taken yet."""
    repo = demo_repo_create(tmp_path / "greet")
    session, _ = start(
        repo, task_spec("first", verify=["true"]), task_spec("second", verify=["true"])
    )
    AgentSession.objects.filter(pk=session.pk).update(driver="workers")
    grant(user, session.project, "viewer")
    assert len(dispatch(session_id=session.pk)) == 2
    return session


def test_the_board_and_the_unit_page_say_what_they_wait_for(
    sent: AgentSession,
    provider: FakeProvider,  # noqa: F811
    user: User,
    web: WebProcess,
    browser: Browser,
) -> None:
    board = logged_in_page(browser, web, user, f"/tasks/?session={sent.pk}")
    first, second = board.locator('tr[data-task="first"]'), board.locator('tr[data-task="second"]')
    expect(first.locator("[data-queue-position]")).to_have_text(
        "waiting for a worker (position 1 in the queue)"
    )
    expect(second.locator("[data-queue-position]")).to_have_text(
        "waiting for a worker (position 2 in the queue)"
    )
    doc_shot(board, "07-board-waiting")

    answer = openai_calls(call("finish", {"summary": "nothing to do"}))
    provider.answer(dataclasses.replace(answer, delay=READING))
    litellm_module()  # imported before the unit: it takes seconds on a busy machine
    first_id = in_thread(lambda: Task.objects.get(plan__session=sent, key="first").pk)
    worker = in_background(
        lambda: unit_run(task_id=first_id, worker="w1", options=UnitOptions(model=MODEL))
    )
    try:
        # A worker took the first: the second moves up, live.
        expect(second.locator("[data-queue-position]")).to_have_text(
            "waiting for a worker (position 1 in the queue)", timeout=WAIT_MS
        )
        expect(first.locator("[data-queue-position]")).to_have_count(0)
        wait_for(lambda: provider.requests, timeout=60, what="the unit's model request")
        unit_id = in_thread(lambda: Unit.objects.get(task_id=first_id).pk)
        watch_the_model_wait(board, web, unit_id)
    finally:
        worker.join(120)


def watch_the_model_wait(page: Any, web: WebProcess, unit_id: int) -> None:
    page.goto(f"{web.url}/units/{unit_id}/")
    waiting = page.locator("#unit-waiting")
    expect(waiting).to_be_visible()
    expect(waiting).to_contain_text("waiting for the model: request sent")
    tokens = int(waiting.locator("[data-waiting-tokens]").inner_text())
    assert tokens > 100  # the unit's brief and tool specs, as litellm counts them
    seconds = waiting.locator("[data-waiting-seconds]")
    before = int(seconds.inner_text())
    page.wait_for_timeout(2500)
    assert int(seconds.inner_text()) >= before + 2  # counting, live
    doc_shot(page, "08-unit-waiting-model")
    # The answer comes: no longer waiting, and the step is on the trace.
    expect(waiting).to_be_hidden(timeout=WAIT_MS)
    expect(page.locator('#unit-trace li[data-kind="model_step"]')).to_have_count(1, timeout=WAIT_MS)
