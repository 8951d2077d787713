"""Browser tests: Debian's Chromium driven by Playwright against a real daphne process.

Playwright's sync API runs an event loop in the test's thread while it is open, and
Django refuses ORM calls next to a running loop. So each test gets its Playwright
from a function-scoped fixture that starts *after* the database fixtures (the user, the
``web`` fixture) and stops *before* their teardown; inside the test, database access
goes through the web process or plain psycopg. The SF web process (daphne) and
Chromium (a Playwright browser server) are started once per test process: every test
that asks for ``web`` shares the one, and ``browser`` connects to the other. Tests list database fixtures
(``agent_session``, ``user``) before ``browser`` so that they are created first.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Browser, Locator, Page, sync_playwright
from playwright.sync_api import Error as PlaywrightError

from tests.processes import WebProcess, wait_for

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
# A folder for the screenshots of docs/journey.md (scripts/journey_shots.sh sets it to
# docs/images/journey): the tests that walk the journey take them where they stand.
DOC_SHOTS = os.environ.get("SF_DOC_SHOTS", "")


def doc_shot(where: Page | Locator, name: str) -> None:
    """A screenshot of the page's viewport (or of one part of it) for docs/journey.md,
    when ``SF_DOC_SHOTS`` names a folder; nothing otherwise."""
    if not DOC_SHOTS:
        return
    folder = Path(DOC_SHOTS)
    folder.mkdir(parents=True, exist_ok=True)
    if isinstance(where, Page):
        where.wait_for_timeout(300)  # the last live swap settles
    where.screenshot(path=str(folder / f"{name}.png"))


@pytest.fixture(scope="session")
def _shared_web(
    django_db_setup: None, django_db_blocker: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[WebProcess]:
    """One daphne per test process (per xdist worker), not one per test: it reads the
    test database, which each test's transactional_db empties after it; what daphne
    keeps in memory is keyed by primary keys, which a flush does not reuse. Its
    user-level skill folder is an empty one of its own, never the machine's."""
    user_skills = tmp_path_factory.mktemp("web") / "user-skills"
    server = WebProcess(
        extra_env={
            "SF_USER_SKILLS": str(user_skills),
            "SF_STATUS_REFRESH": "1s",
            "SF_WORKER_HEARTBEAT": "1s",
            "SF_WORKER_STALE_AFTER": "3s",
            # The fake forge (tests/fake_forge.py) serves on loopback: a project whose
            # policy names it is valid here too, as an operator would allow a host.
            "SF_FORGE_API_HOSTS": "127.0.0.1",
        }
    )
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def web(transactional_db: None, _shared_web: WebProcess) -> WebProcess:
    assert _shared_web.process is not None
    assert _shared_web.process.poll() is None, f"daphne exited:\n{_shared_web.log()}"
    return _shared_web


@pytest.fixture(scope="session")
def _shared_chromium(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One Chromium per test process (per xdist worker), not one per test: Playwright's
    own browser server (``playwright launch-server``, the same launch as
    ``chromium.launch``: its switches, headless), whose websocket address this yields.
    Each test connects with a Playwright of its own, as it must (see the module's
    docstring); its contexts are closed when it disconnects."""
    folder = tmp_path_factory.mktemp("chromium")
    config = folder / "launch.json"
    # Never let Playwright download a browser: use the one from Debian's package.
    options = {"executablePath": CHROMIUM, "args": CHROMIUM_ARGS, "host": "127.0.0.1"}
    config.write_text(json.dumps({**options, "headless": True, "port": 0}))
    command = [sys.executable, "-m", "playwright", "launch-server", "--browser", "chromium"]
    with (folder / "server.log").open("w") as log:
        server = subprocess.Popen(
            [*command, "--config", str(config)],
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
            start_new_session=True,  # its own group: the wrapper, the driver and Chromium
        )
    assert server.stdout is not None
    try:
        endpoint = server.stdout.readline().strip()  # ws://… once Chromium is up
        assert endpoint.startswith("ws://"), (
            f"no browser server: {(folder / 'server.log').read_text()}"
        )
        yield endpoint
    finally:
        # The Python wrapper does not pass a signal on to the driver (node), which
        # outlived it: end the whole group, and wait until nothing of it is left.
        _signal_group(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
        server.stdout.close()
        try:
            wait_for(lambda: not _signal_group(server.pid, 0), timeout=30, what="Chromium to exit")
        finally:
            _signal_group(server.pid, signal.SIGKILL)


def _signal_group(group: int, sig: int) -> bool:
    """Send ``sig`` to a process group; False when no process of it is left."""
    try:
        os.killpg(group, sig)
    except ProcessLookupError:
        return False
    return True


@pytest.fixture
def browser(web: WebProcess, user: User, _shared_chromium: str) -> Iterator[Browser]:
    with sync_playwright() as playwright:
        chromium = playwright.chromium.connect(_shared_chromium)
        try:
            yield chromium
        finally:
            chromium.close()  # its contexts and pages, not the shared Chromium


def logged_in_page(browser: Browser, web: WebProcess, user: User, path: str = "/") -> Page:
    """A new browser context (its own cookies) logged in as ``user`` at ``path``."""
    page = browser.new_context().new_page()
    page.goto(web.url + path)
    page.fill("input[name=username]", user.get_username())
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(web.url + path)
    return page


def reopen(page: Page) -> None:
    """Load the page's address again, as a person's reload does.

    ``page.reload()`` failed once under load with ``net::ERR_ABORTED`` (the reload's own
    navigation cut, nothing of the product's): another try; a third failure is real.
    """
    for attempt in range(3):
        try:
            page.goto(page.url, wait_until="load")
            return
        except PlaywrightError as error:
            if "ERR_ABORTED" not in str(error) or attempt == 2:
                raise
