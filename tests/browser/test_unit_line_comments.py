"""A reviewer comments on a line of the diff after a live re-render of the unit page,
requests changes, and finds the comment on the next unit's page."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from playwright.sync_api import Browser, expect

from agents_app.tests.runtime_helpers import ScriptedModel
from tasks_app.models import Unit
from tasks_app.tests.test_engine import run_next, writes
from tests.browser.conftest import doc_shot, reopen
from tests.browser.test_unit_review import open_unit, repo, rerendered, unit_in_review
from tests.processes import WebProcess

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]
__all__ = ["repo", "unit_in_review"]  # fixtures, used by name
SLOW = 30_000  # ms: two shared cores, a CI run beside us


def next_unit(unit_id: int) -> int:
    """Run the task's next unit (in a thread: Playwright's loop runs in the test's)."""
    found: list[int] = []

    def run() -> None:
        try:
            session = Unit.objects.get(pk=unit_id).task.plan.session
            report = run_next(session, ScriptedModel(*writes("hi\n")))
            found.append(report.unit_id)
        finally:
            connection.close()

    runner = threading.Thread(target=run)
    runner.start()
    runner.join()
    assert found, "the next unit did not run (see the log)"
    return found[0]


def test_a_line_comment_after_a_rerender_travels_with_request_changes(
    unit_in_review: dict[str, Any], user: User, web: WebProcess, browser: Browser
) -> None:
    unit_id = unit_in_review["unit_id"]
    page = open_unit(browser, web, user, unit_id)
    rerendered(page, unit_id, times=2)

    hello = page.locator('#unit-diff details[data-path="hello.txt"]')
    hello.locator('button[data-line="new:1"]').click()
    form = hello.locator("form.diff-comment-form")
    form.locator("textarea").fill("say hi instead")
    form.locator("button.diff-comment-submit").click()
    comments = page.locator("#diff-comments")
    expect(comments).to_contain_text("hello.txt:1 say hi instead", timeout=SLOW)
    expect(form).to_have_count(0, timeout=SLOW)
    page.screenshot(path="/tmp/line-comments-unit.png", full_page=True)
    page.fill("#review-reason", "see the line comment")
    doc_shot(page, "14-line-comment")

    page.fill("#review-reason", "see the line comment")
    page.click("#request-changes")
    expect(page.locator("#unit-state [data-task-status]")).to_have_text("todo", timeout=SLOW)
    reopen(page)
    expect(page.locator("#diff-comments")).to_contain_text("say hi instead", timeout=SLOW)

    second = next_unit(unit_id)
    page.goto(f"{web.url}/units/{second}/")
    carried = page.locator("#carried-comments")
    expect(carried).to_contain_text("Review comments on attempt 1", timeout=SLOW)
    row = carried.locator("tr[data-comment]")
    expect(row).to_contain_text("say hi instead")
    expect(row).to_have_attribute("data-changed", "yes")
    page.screenshot(path="/tmp/line-comments-next-unit.png", full_page=True)
    doc_shot(page, "15-next-attempt-comments")
