"""Browser tests: Debian's Chromium driven by Playwright against a real daphne process.

Playwright's sync API runs an event loop in the test's thread while it is open, and
Django refuses ORM calls next to a running loop. So each test gets its browser from
a function-scoped fixture that starts *after* the database fixtures (the user, the
SF web process) and stops *before* their teardown; inside the test, database access
goes through the web process or plain psycopg. Tests list database fixtures
(``agent_session``, ``user``) before ``browser`` so that they are created first.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Browser, Page, sync_playwright

from tests.processes import WebProcess

CHROMIUM = "/usr/lib/chromium/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
PASSWORD = "correct horse 42"  # the root conftest's users


@pytest.fixture
def web(transactional_db: None) -> Iterator[WebProcess]:
    server = WebProcess(
        extra_env={
            "SF_STATUS_REFRESH": "1s",
            "SF_WORKER_HEARTBEAT": "1s",
            "SF_WORKER_STALE_AFTER": "3s",
        }
    )
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def browser(web: WebProcess, user: User) -> Iterator[Browser]:
    # Never let Playwright download a browser: use the one from Debian's package.
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


def logged_in_page(browser: Browser, web: WebProcess, user: User, path: str = "/") -> Page:
    """A new browser context (its own cookies) logged in as ``user`` at ``path``."""
    page = browser.new_context().new_page()
    page.goto(web.url + path)
    page.fill("input[name=username]", user.get_username())
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(web.url + path)
    return page
