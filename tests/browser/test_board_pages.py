"""A board of 120 tasks in pages of 50: a person pages to page 2, a change made in
another browser reaches them live without sending them back to page 1, and Retry on
page 2 still works after that live re-render. Screenshots at 1280 and 390 px go to
/tmp/board-pages-*.png for a person to look at."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Browser, Page, expect

from sf_core.actors import Actor
from tasks_app.models import Task
from tasks_app.services import plan_accept
from tasks_app.tests.conftest import make_plan, task_data
from tests.browser.conftest import PASSWORD, logged_in_page
from tests.processes import WebProcess

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def big_board(agent_session: Any) -> Any:
    """120 tasks under manual run control (nothing dispatched on its own); t60 and t61,
    on page 2, failed."""
    agent_session.work_mode, agent_session.model_mode = "plan", "deep"
    agent_session.save()
    plan = make_plan(agent_session, *(task_data(f"t{index}") for index in range(120)))
    plan_accept(plan=plan, actor=Actor.system("t"), start=False)
    failed = Task.objects.filter(plan=plan, key__in=["t60", "t61"])
    failed.update(status="failed", status_reason="verification failed")
    return agent_session


def _on_page_two(page: Page) -> None:
    expect(page.locator("nav.pages")).to_have_attribute("data-page", "2")
    expect(page.locator('tr[data-task="t50"]')).to_be_visible()
    expect(page.locator('tr[data-task="t0"]')).to_have_count(0)
    expect(page.locator('tr[data-task="t100"]')).to_have_count(0)


def test_a_live_update_keeps_page_two_and_its_buttons_work(
    big_board: Any, user: User, web: WebProcess, browser: Browser
) -> None:
    board = f"/tasks/?session={big_board.pk}"
    watching = logged_in_page(browser, web, user, board)
    expect(watching.locator("nav.pages")).to_contain_text("page 1 of 3")
    expect(watching.locator("[data-total=tasks]")).to_have_text("120 tasks")
    watching.click("nav.pages a[rel=next]")
    watching.wait_for_url(f"{web.url}{board}&page=2")
    _on_page_two(watching)
    watching.evaluate("window.__notReloaded = true")
    watching.wait_for_timeout(300)  # let the websocket connect

    clicking = logged_in_page(browser, web, user, f"{board}&page=2")
    clicking.click('tr[data-task="t60"] button[data-action="retry"]')
    expect(clicking.locator('tr[data-task="t60"]')).to_have_attribute("data-status", "todo")
    _on_page_two(clicking)  # the button's answer is page 2 too

    t60 = watching.locator('tr[data-task="t60"]')
    expect(t60).to_have_attribute("data-status", "todo", timeout=10_000)  # re-rendered live
    _on_page_two(watching)
    expect(watching.locator("[data-count=failed]")).to_have_text("failed 1")  # all pages
    watching.click('tr[data-task="t61"] button[data-action="retry"]')
    expect(watching.locator('tr[data-task="t61"]')).to_have_attribute(
        "data-status", "todo", timeout=10_000
    )
    _on_page_two(watching)
    expect(watching.locator("[data-recover-error]")).to_have_count(0)
    assert watching.evaluate("window.__notReloaded") is True
    watching.screenshot(path="/tmp/board-pages-1280.png", full_page=True)


def test_the_pages_fit_a_phone(
    big_board: Any, user: User, web: WebProcess, browser: Browser
) -> None:
    page = browser.new_context(viewport={"width": 390, "height": 844}).new_page()
    board = f"/tasks/?session={big_board.pk}&page=3"
    page.goto(web.url + "/login/?next=" + board.replace("&", "%26"))
    page.fill("input[name=username]", user.get_username())
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(web.url + board)
    expect(page.locator("nav.pages")).to_contain_text("Showing 101\u2013120 of 120")
    expect(page.locator("nav.pages a[rel=prev]")).to_be_visible()
    expect(page.locator("nav.pages a[rel=next]")).to_have_count(0)
    page.screenshot(path="/tmp/board-pages-390.png", full_page=True)
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


# Marks the page (a reload would drop it) and records the parts htmx found no target for.
OOB_ERRORS = """
window.__notReloaded = true;
window.__oobErrors = [];
document.body.addEventListener("htmx:oobErrorNoTarget", (event) => {
  window.__oobErrors.push(String(event.detail.target));
});
"""


@pytest.fixture
def failed_on_both_pages(big_board: Any) -> Any:
    """The big board with t10, on page 1, failed too."""
    Task.objects.filter(plan__session=big_board, key="t10").update(
        status="failed", status_reason="verification failed"
    )
    return big_board


def _watching(browser: Browser, web: WebProcess, user: User, path: str) -> tuple[Page, list[str]]:
    """A logged-in page at ``path`` and the websocket frames it receives from now on."""
    page = browser.new_context().new_page()
    frames: list[str] = []
    page.on("websocket", lambda ws: ws.on("framereceived", lambda data: frames.append(str(data))))
    page.goto(web.url + "/login/?next=" + path.replace("&", "%26"))
    page.fill("input[name=username]", user.get_username())
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(web.url + path)
    expect(page.locator("#task-board")).to_be_visible()
    return page, frames


def _row_applied(page: Page, frames: list[str], key: str) -> None:
    """The row of ``key`` came alone (no whole board) and is a whole row of the table."""
    row = page.locator(f'table.board tbody > tr[data-task="{key}"]')
    expect(row).to_have_attribute("data-status", "todo", timeout=15_000)
    expect(row.locator("> td")).to_have_count(10)
    row_id = row.get_attribute("id")
    changed = f'<tr id="{row_id}" data-task="{key}" data-status="todo"'
    carried = [frame for frame in frames if changed in frame]
    assert carried, f"no frame carried {row_id}"
    assert all('id="task-board"' not in frame for frame in carried), "the whole board came"
    expect(page.locator("table.board tbody > tr")).to_have_count(50)
    assert page.evaluate("window.__oobErrors") == [], "a part found nowhere to go"


def test_a_changed_row_sent_alone_applies_on_pages_one_and_two(
    failed_on_both_pages: Any, user: User, web: WebProcess, browser: Browser
) -> None:
    """A change to a task a page shows sends that row alone (and the totals), not the
    board: htmx must swap the bare ``<tr>`` into the table, on page 1 and on page 2, and
    the buttons of the swapped row must work."""
    board = f"/tasks/?session={failed_on_both_pages.pk}"
    first, first_frames = _watching(browser, web, user, board)
    second, second_frames = _watching(browser, web, user, f"{board}&page=2")
    for page in (first, second):
        page.evaluate(OOB_ERRORS)
    first.wait_for_timeout(300)  # let the websockets connect

    clicking = logged_in_page(browser, web, user, board)
    clicking.click('tr[data-task="t10"] button[data-action="retry"]')
    expect(clicking.locator('tr[data-task="t10"]')).to_have_attribute("data-status", "todo")
    _row_applied(first, first_frames, "t10")
    expect(first.locator("[data-count=failed]")).to_have_text("failed 2")

    clicking.goto(f"{web.url}{board}&page=2")
    clicking.click('tr[data-task="t60"] button[data-action="retry"]')
    _row_applied(second, second_frames, "t60")
    expect(second.locator("[data-count=failed]")).to_have_text("failed 1")
    _on_page_two(second)

    # The swapped-in row's own button works (htmx processed the new row).
    first.click('tr[data-task="t10"] button[data-action="skip"]')
    expect(first.locator('tr[data-task="t10"]')).to_have_attribute("data-status", "skipped")
    for page in (first, second):
        assert page.evaluate("window.__notReloaded") is True
        assert page.evaluate("window.__oobErrors") == []
