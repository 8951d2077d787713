"""A person makes a schedule from the project's page (a bad cron expression first, told
what is wrong), runs it now, and sees its next run on /tasks and on the dashboard."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Browser, expect

from tasks_app.tests.schedule_helpers import PLAN_TEMPLATE
from tests.browser.conftest import logged_in_page
from tests.processes import WebProcess

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]
SHOTS = Path(tempfile.gettempdir())


def test_a_schedule_is_made_on_the_page_and_shown_on_tasks_and_the_dashboard(
    project: Any, user: User, web: WebProcess, browser: Browser
) -> None:
    page = logged_in_page(browser, web, user, f"/projects/{project.pk}/")
    page.click("[data-schedules-link]")
    form = page.locator("[data-schedule-form]")
    form.locator("input[name=name]").fill("nightly bump")
    form.locator("input[name=kind][value=plan]").check()
    form.locator("textarea[name=plan_text]").fill(PLAN_TEMPLATE)
    form.locator("input[name=cron]").fill("30 26 * * *")
    form.locator("input[name=timezone]").fill("Europe/Berlin")
    form.locator("[data-schedule-save]").click()
    expect(page.locator('[data-error="cron"]')).to_contain_text("bad hour field")
    expect(page.locator("#project-schedules")).to_contain_text("No schedules yet")

    form = page.locator("[data-schedule-form]")  # the form came back with what was typed
    expect(form.locator("input[name=name]")).to_have_value("nightly bump")
    form.locator("input[name=cron]").fill("30 2 * * *")
    form.locator("[data-schedule-save]").click()
    summary = page.locator("#schedule-summary")
    expect(summary).to_contain_text("30 2 * * *")
    expect(summary.locator("[data-next-local]")).to_contain_text("02:30 CE")

    page.click('[data-action="run"]')
    run = page.locator('#schedule-runs tr[data-status="proposed"]')
    expect(run).to_contain_text("run now")
    expect(run.locator("a").first).to_contain_text("session")
    page.screenshot(path=str(SHOTS / "schedules-1-runs.png"), full_page=True)

    page.goto(web.url + "/tasks/")
    row = page.locator('#schedules-upcoming tr[data-schedule="nightly bump"]')
    expect(row.locator("[data-next-local]")).to_contain_text("02:30 CE")
    expect(row.locator("[data-last-run]")).to_have_text("proposed")
    page.screenshot(path=str(SHOTS / "schedules-2-tasks.png"), full_page=True)

    page.goto(web.url + "/")
    row = page.locator('#schedules-upcoming tr[data-schedule="nightly bump"]')
    expect(row).to_be_visible()
    expect(row.locator("[data-next-utc]")).not_to_have_text("-")
    page.screenshot(path=str(SHOTS / "schedules-3-dashboard.png"), full_page=True)
