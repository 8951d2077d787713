"""The doctor page as a staff member walks it: the nav link, a real broken state named
with its evidence, Fix, the repair recorded, the check passing afterwards; and a phone
that needs no sideways scroll. Screenshots go to /tmp/doctor-*.png for a person to
look at. Someone who is not staff sees no link and is refused the page."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import pytest
from django.contrib.auth.models import User
from django.db import connections
from playwright.sync_api import Browser, expect

from agents_app.models import RepairRecord
from conftest import grant
from tests.browser.conftest import logged_in_page
from tests.processes import WebProcess

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]
SLOW = 20_000
T = TypeVar("T")


def off_the_loop(query: Callable[[], T]) -> T:
    """Run an ORM query on a thread of its own: Playwright's sync API keeps an event loop
    running in the test's thread, where Django refuses database calls."""

    def closing() -> T:
        try:
            return query()
        finally:
            connections.close_all()  # this thread's connection, before the test DB goes

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(closing).result()


def repairs_of_locks() -> list[RepairRecord]:
    return list(RepairRecord.objects.filter(check_id="locks.dead"))


def test_staff_find_the_broken_lock_fix_it_and_see_the_repair(
    stale_lock: Path, project: Any, staff_user: User, web: WebProcess, browser: Browser
) -> None:
    # A repair needs REPAIR on the project it touches (off the browser's event loop).
    off_the_loop(lambda: grant(staff_user, project, "admin"))
    page = logged_in_page(browser, web, staff_user, "/")
    page.click("header nav a:text-is('Doctor')")
    page.wait_for_url(web.url + "/doctor/")
    row = page.locator("tr[data-check='locks.dead']")
    expect(row).not_to_have_attribute("data-severity", "ok")
    expect(row).to_contain_text(str(stale_lock))  # the evidence names the file
    expect(row).to_contain_text("(fixable)")
    page.screenshot(path="/tmp/doctor-1-found-1280.png", full_page=True)

    page.click("button[data-doctor-fix]")
    repairs = page.locator("[data-doctor-repairs]")
    expect(repairs).to_contain_text("locks.dead", timeout=SLOW)
    expect(repairs).to_contain_text(str(stale_lock))
    expect(page.locator("tr[data-check='locks.dead']")).to_have_attribute(
        "data-severity", "ok", timeout=SLOW
    )
    page.screenshot(path="/tmp/doctor-2-fixed-1280.png", full_page=True)
    assert not stale_lock.exists()
    [record] = off_the_loop(repairs_of_locks)
    assert str(stale_lock) in record.target
    assert (record.actor_kind, record.actor_user_id) == ("user", staff_user.pk)

    # The repair is listed among the recent ones when the page is opened again, and a
    # second Fix finds nothing to do (idempotent: no second audit row).
    page.goto(web.url + "/doctor/")
    expect(page.locator("table").last).to_contain_text(str(stale_lock))
    page.click("button[data-doctor-fix]")
    expect(page.locator("[data-doctor-repairs]")).to_contain_text("Nothing to repair.")
    assert len(off_the_loop(repairs_of_locks)) == 1

    phone = browser.new_context(viewport={"width": 390, "height": 844}).new_page()
    phone.context.add_cookies(page.context.cookies())
    phone.goto(web.url + "/doctor/")
    phone.screenshot(path="/tmp/doctor-3-390.png", full_page=True)
    assert phone.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


def test_someone_not_staff_has_no_link_and_is_refused(
    user: User, web: WebProcess, browser: Browser
) -> None:
    page = logged_in_page(browser, web, user, "/")
    expect(page.locator("header nav a:text-is('Doctor')")).to_have_count(0)
    response = page.goto(web.url + "/doctor/")
    assert response is not None
    assert response.status == 403
