"""The dashboard follows workers and sessions live, without a reload."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Browser, expect

from tests.browser.conftest import logged_in_page
from tests.processes import WebProcess, WorkerProcess

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_worker_start_and_stop_show_up_without_reload(
    browser: Browser, web: WebProcess, user: User
) -> None:
    page = logged_in_page(browser, web, user)
    expect(page.locator("#system-status [data-probe=database] .value")).to_have_text("PostgreSQL")
    expect(page.locator("#system-status [data-probe=native] .value")).to_contain_text("sf_native")
    page.evaluate("window.__notReloaded = true")

    worker = WorkerProcess()
    worker.start()
    try:
        row = page.locator(f'[data-worker="{worker.hostname}"]')
        expect(row).to_have_attribute("data-online", "true", timeout=30_000)
        worker.stop()
        expect(row).to_have_attribute("data-online", "false", timeout=15_000)
    finally:
        worker.stop()
    assert page.evaluate("window.__notReloaded") is True


def test_a_killed_worker_goes_offline_when_its_heartbeat_goes_stale(
    browser: Browser, web: WebProcess, user: User
) -> None:
    page = logged_in_page(browser, web, user)
    worker = WorkerProcess()
    worker.start()
    try:
        row = page.locator(f'[data-worker="{worker.hostname}"]')
        expect(row).to_have_attribute("data-online", "true", timeout=30_000)
        worker.stop(sig=9)
        expect(row).to_have_attribute("data-online", "false", timeout=15_000)
    finally:
        worker.stop()


def test_the_session_table_follows_a_pause_live_and_keeps_its_filter(
    agent_session: Any, user: User, web: WebProcess, browser: Browser
) -> None:
    everything = logged_in_page(browser, web, user)
    active_only = logged_in_page(browser, web, user)
    active_only.goto(f"{web.url}/?outcome=active")
    for page in (everything, active_only):
        row = page.locator(f'#session-table tr[data-session="{agent_session.pk}"]')
        expect(row).to_have_attribute("data-outcome", "active")
        page.evaluate("window.__notReloaded = true")
        page.wait_for_timeout(300)  # let the websocket connect

    session_page = logged_in_page(browser, web, user, f"/sessions/{agent_session.pk}/")
    session_page.fill("#command-bar input[name=text]", "/pause")
    session_page.click("#command-bar button[type=submit]")

    row = everything.locator(f'#session-table tr[data-session="{agent_session.pk}"]')
    expect(row).to_have_attribute("data-outcome", "paused", timeout=10_000)
    expect(active_only.locator("#session-table")).to_contain_text(
        "No session matches these filters.", timeout=10_000
    )
    for page in (everything, active_only):
        assert page.evaluate("window.__notReloaded") is True
