"""Retry on the task board: the click works on a board that a live update re-rendered
(the CSRF header is on <body>, never inside the swapped partial)."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from playwright.sync_api import Browser, expect

from sf_core.actors import Actor
from tasks_app.lifecycle import task_transition
from tasks_app.models import HoldReason, Task
from tasks_app.services import plan_accept
from tasks_app.tests.conftest import make_plan, task_data
from tests.browser.conftest import logged_in_page
from tests.processes import WebProcess

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def failed_plan(agent_session: Any) -> Any:
    """An accepted plan under manual run control (nothing is dispatched on its own)
    whose two tasks failed; the project is a real git repository."""
    agent_session.work_mode, agent_session.model_mode = "plan", "deep"
    agent_session.save()
    plan = make_plan(agent_session, task_data("api"), task_data("docs"))
    plan_accept(plan=plan, actor=Actor.system("t"), start=False)
    Task.objects.filter(plan=plan).update(status="failed", status_reason="verification failed")
    return plan


def test_retry_after_a_live_rerender(
    failed_plan: Any, user: User, web: WebProcess, browser: Browser
) -> None:
    path = f"/tasks/?session={failed_plan.session_id}"
    clicking = logged_in_page(browser, web, user, path)
    watching = logged_in_page(browser, web, user, path)
    watching.evaluate("window.__notReloaded = true")
    expect(watching.locator('tr[data-task="api"] button[data-action="retry"]')).to_be_visible()
    watching.wait_for_timeout(300)  # let the websocket connect

    clicking.click('tr[data-task="api"] button[data-action="retry"]')
    expect(clicking.locator('tr[data-task="api"]')).to_have_attribute("data-status", "todo")

    api = watching.locator('tr[data-task="api"]')
    expect(api).to_have_attribute("data-status", "todo", timeout=10_000)  # re-rendered live
    expect(api.locator('button[data-action="retry"]')).to_have_count(0)
    watching.click('tr[data-task="docs"] button[data-action="retry"]')
    expect(watching.locator('tr[data-task="docs"]')).to_have_attribute(
        "data-status", "todo", timeout=10_000
    )
    expect(watching.locator("[data-recover-error]")).to_have_count(0)
    assert watching.evaluate("window.__notReloaded") is True


def test_a_paused_task_is_resumed_from_the_board(
    failed_plan: Any, user: User, web: WebProcess, browser: Browser
) -> None:
    """A task paused by a stop (its unit cancelled) offers Resume, not only Skip and
    Cancel: back to todo, with its work so far."""
    page = logged_in_page(browser, web, user, f"/tasks/?session={failed_plan.session_id}")
    api = page.locator('tr[data-task="api"]')
    expect(api.locator('button[data-action="retry"]')).to_be_visible()
    _pause_in_thread(failed_plan)
    expect(api).to_have_attribute("data-status", "paused", timeout=10_000)  # live

    api.locator('button[data-action="resume"]').click()

    expect(api).to_have_attribute("data-status", "todo", timeout=10_000)
    expect(api.locator('button[data-action="resume"]')).to_have_count(0)
    expect(page.locator("[data-recover-error]")).to_have_count(0)


def _pause_in_thread(plan: Any) -> None:
    """Pause task "api" as a session stop does, off the test's thread (Playwright's
    loop runs there, and Django refuses ORM calls beside it)."""

    def pause() -> None:
        try:
            task = Task.objects.get(plan=plan, key="api")
            Task.objects.filter(pk=task.pk).update(status="in_progress")
            task.refresh_from_db()
            task_transition(task=task, to="paused", reason="stopped", hold=HoldReason.STOPPED)
        finally:
            connection.close()

    thread = threading.Thread(target=pause)
    thread.start()
    thread.join(30)
