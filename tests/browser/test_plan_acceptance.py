"""Clicking Run autonomously changes the badge and the task board live."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Browser, expect

from tasks_app.tests.conftest import make_plan, task_data
from tests.browser.conftest import doc_shot, logged_in_page
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


@pytest.fixture
def linted_plan(agent_session: Any) -> Any:
    agent_session.work_mode, agent_session.model_mode = "plan", "deep"
    agent_session.save()
    return make_plan(
        agent_session,
        task_data("api", verify=["echo done"], intent_claim=["api.py"]),
        task_data("ui", depends_on=["api"], verify=["grep -q ui ui.py"], intent_claim=["ui.py"]),
    )


def test_a_proposed_plan_shows_its_lint_is_edited_then_rejected_with_a_reason(
    linted_plan: Any, user: User, web: WebProcess, browser: Browser
) -> None:
    page = logged_in_page(browser, web, user, f"/plans/{linted_plan.pk}/")
    api_lint = page.locator('ul[data-lint-task="api"] li[data-lint-level="error"]')
    expect(api_lint).to_contain_text("echo done")
    expect(api_lint).to_contain_text("it checks nothing")
    expect(page.locator('[data-lint-task="ui"][data-lint-clean]')).to_be_visible()
    doc_shot(page, "04-plan-lint")

    page.click("#plan-edit summary")
    document = page.locator("#plan-document")
    text = document.input_value()
    assert "- echo done" in text
    document.fill(text.replace("- echo done", "- grep -q api bad.py `x`\n  bogus: 1"))
    page.click("#plan-save")
    expect(page.locator("#plan-edit-error")).to_contain_text("tasks[0] (api).bogus")
    doc_shot(page.locator("#plan-edit"), "05-plan-edit")
    document = page.locator("#plan-document")
    edited = text.replace("- echo done", "- grep -q 'def api' api.py")
    document.fill(edited.replace("key: ui", "key: web-ui"))
    page.click("#plan-save")
    expect(page.locator('[data-lint-task="api"][data-lint-clean]')).to_be_visible()
    expect(page.locator('section[data-task="web-ui"]')).to_contain_text("Depends on: api")
    expect(page.locator("section.task-spec")).to_have_count(2)
    expect(page.locator('section[data-task="ui"]')).to_have_count(0)

    page.click("#plan-reject")
    expect(page.locator("#plan-reject-error")).to_contain_text("say why the plan is rejected")
    page.fill("#reject-reason", "use the existing cli.py")
    page.click("#plan-reject")
    expect(page.locator("#plan-rejection")).to_have_text(
        f"Rejected by {user.username}: use the existing cli.py"
    )
    expect(page.locator("[data-plan-status]")).to_have_text("rejected")
    doc_shot(page, "05-plan-rejected")
    expect(page.locator("#plan-document")).to_have_count(0)
