"""Reviewing a unit in the browser after the websocket has re-rendered its state.

The unit page's ``#unit-state`` partial is re-rendered by ``UnitConsumer`` without a
request. Its buttons must still work afterwards (the CSRF header lives on <body>).
"""

from __future__ import annotations

import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from playwright.sync_api import Browser, Page, expect

from agents_app.tests.runtime_helpers import ScriptedModel
from conftest import grant
from sf_core.live import Groups, broadcast
from tasks_app.engine.replaying import demo_repo_create
from tasks_app.models import Unit
from tasks_app.tests.test_engine import run_next, start, task_spec
from tests.browser.conftest import logged_in_page
from tests.processes import WebProcess

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

# Counts the websocket messages htmx has swapped in, and remembers the #unit-state
# the page was served with: a re-render replaces that node.
WATCH_SWAPS = """
window.__wsMessages = 0;
document.addEventListener("htmx:wsAfterMessage", () => { window.__wsMessages += 1; });
document.addEventListener("DOMContentLoaded", () => {
  window.__servedState = document.getElementById("unit-state");
});
"""
PYTHON = '''def greet(name):
    """Say hello to <name>."""
    return f"hello {name}"
'''


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return demo_repo_create(tmp_path / "greet")


@pytest.fixture
def unit_in_review(repo: Path, user: User) -> dict[str, Any]:
    """A replayed unit that wrote two files, verified, and waits for a person (``user``,
    an approver of its project)."""
    session, plan = start(repo, task_spec(), profile="normal")
    grant(user, session.project, "approver")
    model = ScriptedModel(
        ("look first", [("run_command", {"command": "ls -la"})]),
        ("writing", [("write_file", {"path": "hello.txt", "content": "hello\n"})]),
        ("and code", [("write_file", {"path": "greet.py", "content": PYTHON})]),
        ("done", [("finish", {"summary": "wrote hello.txt and greet.py"})]),
    )
    assert run_next(session, model).task_status == "review"
    unit = Unit.objects.get(task__plan=plan)
    return {"unit_id": unit.pk, "task_id": unit.task_id}


def ask_for_a_render(unit_id: int) -> None:
    """What a new trace event does: a broadcast to the unit's group. Sent from a
    thread of its own (Playwright's loop runs in the test's), which closes the
    database connection ``broadcast``'s on_commit opened, or the test database
    stays in use."""

    def send() -> None:
        try:
            broadcast(Groups.unit(unit_id), "trace.appended")
        finally:
            connection.close()

    sender = threading.Thread(target=send)
    sender.start()
    sender.join()


def rerendered(page: Page, unit_id: int, times: int) -> None:
    """Wait until the websocket has swapped #unit-state in ``times`` times, asking the
    consumer for one more render (a broadcast to the unit's group) after the first."""
    page.wait_for_function("window.__wsMessages >= 1", timeout=30_000)
    for _ in range(times - 1):
        ask_for_a_render(unit_id)
    page.wait_for_function(
        f"window.__wsMessages >= {times}"
        " && document.getElementById('unit-state') !== window.__servedState",
        timeout=30_000,
    )


def open_unit(browser: Browser, web: WebProcess, user: User, unit_id: int) -> Page:
    page = logged_in_page(browser, web, user, "/")
    page.add_init_script(WATCH_SWAPS)
    page.goto(f"{web.url}/units/{unit_id}/")
    return page


def git_subjects(repo: Path) -> list[str]:
    out = subprocess.run(
        ["git", "log", "--format=%s", "main"], cwd=repo, capture_output=True, text=True, check=True
    )
    return out.stdout.splitlines()


def test_approve_and_merge_works_after_the_state_was_rerendered(
    unit_in_review: dict[str, Any], repo: Path, user: User, web: WebProcess, browser: Browser
) -> None:
    unit_id = unit_in_review["unit_id"]
    page = open_unit(browser, web, user, unit_id)
    expect(page.locator("#unit-diff details.diff-file")).to_have_count(2)
    page.screenshot(path="/tmp/review-unit-page.png", full_page=True)
    page.set_viewport_size({"width": 390, "height": 844})
    page.screenshot(path="/tmp/review-unit-narrow.png", full_page=True)
    page.set_viewport_size({"width": 1280, "height": 720})
    rerendered(page, unit_id, times=2)

    page.click("#approve-merge")

    expect(page.locator("#unit-state [data-task-status]")).to_have_text("done", timeout=30_000)
    assert page.url == f"{web.url}/units/{unit_id}/"
    assert git_subjects(repo)[0] == "sf: merge hello: Write hello.txt"
    assert (repo / "greet.py").read_text() == PYTHON


def test_request_changes_with_a_comment_after_a_rerender(
    unit_in_review: dict[str, Any], repo: Path, user: User, web: WebProcess, browser: Browser
) -> None:
    unit_id = unit_in_review["unit_id"]
    page = open_unit(browser, web, user, unit_id)
    rerendered(page, unit_id, times=2)

    page.fill("#review-reason", "greet should say hi, not hello")
    ask_for_a_render(unit_id)  # a live update while the reviewer is typing
    page.wait_for_function("window.__wsMessages >= 3", timeout=30_000)
    expect(page.locator("#review-reason")).to_have_value("greet should say hi, not hello")
    page.click("#request-changes")

    state = page.locator("#unit-state")
    expect(state.locator("[data-task-status]")).to_have_text("todo", timeout=30_000)
    expect(state).to_contain_text("changes requested by ada: greet should say hi, not hello")
    assert git_subjects(repo)[0] != "sf: merge hello: Write hello.txt"

    page.click("#unit-state a:text('board')")  # the board leads back to the unit
    link = page.locator(f'tr[data-task="hello"] a[data-unit-link="{unit_id}"]').first
    expect(link).to_have_text("unit 1 · succeeded")
    page.screenshot(path="/tmp/review-board.png", full_page=True)
    link.click()
    page.wait_for_url(f"{web.url}/units/{unit_id}/")
