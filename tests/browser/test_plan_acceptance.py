"""Clicking Run autonomously changes the badge and the task board live."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Browser, expect

from tasks_app.tests.conftest import make_plan, task_data
from tests.browser.conftest import logged_in_page
from tests.processes import WebProcess

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def proposed_plan(agent_session: Any) -> Any:
    agent_session.work_mode, agent_session.model_mode = "plan", "deep"
    agent_session.save()
    return make_plan(agent_session, task_data("api"), task_data("ui", depends_on=["api"]))


def test_run_autonomously_changes_the_badge_and_the_board_live(
    proposed_plan: Any, user: User, web: WebProcess, browser: Browser
) -> None:
    session_id = proposed_plan.session_id
    board = logged_in_page(browser, web, user, f"/tasks/?session={session_id}")
    board.evaluate("window.__notReloaded = true")
    expect(board.locator("#mode-badge")).to_have_attribute("data-work-mode", "plan")
    expect(board.locator("#task-board")).to_contain_text("No tasks")
    board.wait_for_timeout(300)  # let the websocket connect

    plan_page = logged_in_page(browser, web, user, f"/plans/{proposed_plan.pk}/")
    expect(plan_page.locator("#mode-badge .badge-full")).to_have_text(
        "SF plan | manual | normal | deep"
    )
    plan_page.select_option("select[name=permission_profile]", "trusted")
    plan_page.click("#run-autonomously")
    plan_page.wait_for_url(f"{web.url}/tasks/?session={session_id}")

    badge = board.locator("#mode-badge")
    expect(badge).to_have_attribute("data-work-mode", "build", timeout=10_000)
    expect(badge.locator(".badge-full")).to_have_text("SF build | autonomous | trusted | smart")
    expect(board.locator('tr[data-task="api"]')).to_have_attribute("data-status", "todo")
    expect(board.locator('tr[data-task="api"]')).to_contain_text("ready: waiting for a worker")
    expect(board.locator('tr[data-task="ui"]')).to_contain_text("waiting for api to be done")
    assert board.evaluate("window.__notReloaded") is True
