"""Replay the demo, as a new user does it from the dashboard: no model key, a real
worker, the recorded trace answering. Screenshots: /tmp/demo-<step>.png."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Browser, expect

from tests.browser.conftest import PASSWORD
from tests.processes import WebProcess, WorkerProcess

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]
NO_MODELS = {"SF_MODEL_FAST": "", "SF_MODEL_SMART": "", "SF_MODEL_DEEP": ""}
SLOW = 90_000  # ms: a unit on a loaded two-core machine


@pytest.fixture
def worker(tmp_path: Path) -> Iterator[WorkerProcess]:
    process = WorkerProcess(extra_env={**NO_MODELS, "SF_DATA_DIR": str(tmp_path / "data")})
    process.start()
    try:
        yield process
    finally:
        process.stop()


@pytest.fixture
def web(transactional_db: None, worker: WorkerProcess, tmp_path: Path) -> Iterator[WebProcess]:
    server = WebProcess(
        extra_env={
            **NO_MODELS,
            "SF_CELERY_QUEUE": worker.queue,
            "SF_DATA_DIR": str(tmp_path / "data"),
        }
    )
    server.start()
    try:
        yield server
    finally:
        server.stop()


def test_replay_the_demo_from_the_dashboard_to_the_merge(
    user: User, web: WebProcess, browser: Browser, tmp_path: Path
) -> None:
    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    page.goto(web.url + "/")
    page.fill("input[name=username]", user.get_username())
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(web.url + "/")
    page.wait_for_timeout(500)  # the dashboard's live parts connect and re-render
    page.screenshot(path="/tmp/demo-1-dashboard.png", full_page=True)
    page.click("#replay-demo")
    page.wait_for_url("**/sessions/*/")
    review = page.locator("#plans-list [data-review-plan]")
    expect(review).to_be_visible(timeout=SLOW)  # planned on the worker, from the trace
    expect(page.locator("#plans-list")).to_contain_text("Say goodbye too")
    page.screenshot(path="/tmp/demo-2-session.png", full_page=True)
    review.click()
    expect(page.locator("[data-replaying]")).to_contain_text("demo-trace.jsonl")
    # The demo replays a recording of a real model, and says which.
    expect(page.locator("#replay-model")).to_contain_text("qwen2.5-coder-1.5b")
    # Recorded under trusted: proposed, so that its test runs need no approval.
    expect(page.locator("[data-recorded-profile]")).to_have_text("trusted")
    expect(page.locator("select[name=permission_profile]")).to_have_value("trusted")
    page.click("#run-autonomously")
    page.wait_for_url("**/tasks/?session=*")
    row = page.locator('tr[data-task="farewell"]')
    # Trusted approves a review whose verification passed: the change is merged.
    expect(row).to_have_attribute("data-status", "done", timeout=SLOW)
    page.screenshot(path="/tmp/demo-3-board.png", full_page=True)
    repo = tmp_path / "data" / "demo" / "greeter-1"
    said = subprocess.run(
        ["python3", "-c", "from farewell import farewell; print(farewell('Ada'))"],
        cwd=repo,
        capture_output=True,
        text=True,
    )
    assert said.stdout == "Goodbye, Ada!\n", said.stderr  # merged into the copy's main
