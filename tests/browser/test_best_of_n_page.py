"""Best-of-N in the browser: a task's three attempts side by side, a reviewer's pick of
another than the ranking's, then its approval from the unit page merges the picked one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Browser, expect

from conftest import grant
from tasks_app.engine.replaying import demo_repo_create
from tasks_app.models import Unit
from tasks_app.tests.test_best_of_n import LONG_TEXT, ByVariant
from tasks_app.tests.test_engine import run_next, start, task_spec
from tests.browser.conftest import logged_in_page
from tests.processes import WebProcess

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return demo_repo_create(tmp_path / "greet")


@pytest.fixture
def round_in_review(repo: Path, user: User) -> dict[str, Any]:
    """Three attempts ran (1 failed verification; 3, the smallest, was kept) and the
    task waits for ``user``, an approver of its project."""
    session, plan = start(repo, task_spec(best_of=3), profile="normal")
    grant(user, session.project, "approver")
    assert run_next(session, ByVariant()).task_status == "review"
    units = {u.attempt: u.pk for u in Unit.objects.filter(task__plan=plan)}
    return {"task_id": plan.tasks.get().pk, "units": units}


def test_attempts_side_by_side_and_a_pick_that_is_merged(
    round_in_review: dict[str, Any], repo: Path, user: User, web: WebProcess, browser: Browser
) -> None:
    task_id, units = round_in_review["task_id"], round_in_review["units"]
    page = logged_in_page(browser, web, user, f"/tasks/{task_id}/attempts")
    attempts = page.locator("article.attempt")
    expect(attempts).to_have_count(3)
    first, second, third = (page.locator(f"article[data-attempt='{n}']") for n in (1, 2, 3))
    expect(first.locator("[data-verification]")).to_have_attribute("data-verification", "failed")
    expect(second.locator("[data-verification]")).to_have_attribute("data-verification", "passed")
    expect(third).to_have_attribute("data-chosen", "")
    expect(second.locator("[data-diffstat]")).to_contain_text("+4")
    expect(third.locator("[data-diffstat]")).to_contain_text("+1")
    expect(second.locator("[data-cost]")).to_have_text("$0.040000")
    expect(second.locator("details.diff-file")).to_contain_text("and a fourth")
    expect(page.locator("[data-round-reason]")).to_contain_text("attempt 3 kept")
    expect(first.locator("[data-pick]")).to_have_count(0)  # failed: not pickable
    page.screenshot(path="/tmp/best-of-n-attempts.png", full_page=True)

    second.locator("input[name=note]").fill("the longer text reads better")
    second.locator("[data-pick='2']").click()

    expect(page.locator("article[data-attempt='2']")).to_have_attribute("data-chosen", "")
    expect(page.locator("[data-round-reason]")).to_contain_text(
        f"attempt 2 picked by {user.username} instead of attempt 3"
    )
    page.goto(f"{web.url}/units/{units[2]}/")
    page.click("#approve-merge")
    expect(page.locator("[data-task-status]")).to_have_attribute(
        "data-task-status", "done", timeout=60_000
    )
    assert (repo / "hello.txt").read_text() == LONG_TEXT
