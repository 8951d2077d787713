"""The mode badge is live: a command typed in one browser changes it in another."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Browser, expect

from tests.browser.conftest import logged_in_page
from tests.processes import WebProcess

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_a_command_in_one_page_changes_the_badge_in_another_without_reload(
    agent_session: Any, user: User, web: WebProcess, browser: Browser
) -> None:
    path = f"/sessions/{agent_session.pk}/"
    typing_page = logged_in_page(browser, web, user, path)
    watching_page = logged_in_page(browser, web, user, path)
    watching_page.evaluate("window.__notReloaded = true")
    badge = watching_page.locator("#mode-badge")
    expect(badge).to_have_attribute("data-work-mode", "chat")
    watching_page.wait_for_timeout(300)  # let the websocket connect

    typing_page.fill(
        "#command-bar input[name=text]", "/mode build --autonomous --permission-profile trusted"
    )
    typing_page.click("#command-bar button[type=submit]")
    expect(typing_page.locator("#command-result")).to_contain_text(
        "SF build | autonomous | trusted | smart"
    )

    expect(badge).to_have_attribute("data-work-mode", "build", timeout=10_000)
    expect(badge).to_have_attribute("data-run-control", "autonomous")
    expect(badge.locator(".badge-full")).to_have_text("SF build | autonomous | trusted | smart")
    expect(watching_page.locator("#transition-timeline li").first).to_contain_text(
        "work_mode chat → build"
    )
    assert watching_page.evaluate("window.__notReloaded") is True


def test_errors_show_inline_and_shortcuts_send_commands(
    agent_session: Any, user: User, web: WebProcess, browser: Browser
) -> None:
    page = logged_in_page(browser, web, user, f"/sessions/{agent_session.pk}/")
    page.fill("#command-bar input[name=text]", "/sf mode build")
    page.click("#command-bar button[type=submit]")
    expect(page.locator("#command-result")).to_contain_text("/sf is not a command root")
    expect(page.locator("#command-result")).to_have_attribute("data-error", "true")

    page.locator("body").click()
    page.keyboard.press("Control+Shift+R")
    expect(page.locator("#mode-badge")).to_have_attribute(
        "data-work-mode", "repair", timeout=10_000
    )
    page.keyboard.press("Control+Shift+A")
    expect(page.locator("#mode-badge")).to_have_attribute(
        "data-run-control", "autonomous", timeout=10_000
    )
    page.keyboard.press("Control+Shift+P")
    expect(page.locator("#mode-badge")).to_have_attribute(
        "data-permission-profile", "trusted", timeout=10_000
    )


def test_narrow_screens_get_the_compact_badge_unless_repair_or_review(
    agent_session: Any, user: User, web: WebProcess, browser: Browser
) -> None:
    page = logged_in_page(browser, web, user, f"/sessions/{agent_session.pk}/")
    page.set_viewport_size({"width": 480, "height": 800})
    expect(page.locator("#mode-badge .badge-compact")).to_be_visible()
    expect(page.locator("#mode-badge .badge-full")).to_be_hidden()
    page.fill("#command-bar input[name=text]", "/mode review")
    page.click("#command-bar button[type=submit]")
    expect(page.locator("#mode-badge")).to_have_attribute(
        "data-work-mode", "review", timeout=10_000
    )
    expect(page.locator("#mode-badge .badge-full")).to_be_visible()
