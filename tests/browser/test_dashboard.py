"""The dashboard's system status follows workers live, without a reload."""

from __future__ import annotations

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
