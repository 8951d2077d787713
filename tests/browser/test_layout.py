"""Every main page fits a 390 px phone (no sideways scroll of the page) and shows the
same nav; screenshots at 390 and 1280 px go to /tmp/basics-*.png for a person to look at."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils import timezone
from playwright.sync_api import Browser, Page

from agents_app.models import ReviewStatus, RiskDecision
from sf_core.actors import Actor
from tasks_app.features.schedules.services import schedule_create
from tasks_app.models import Plan, PlanStatus
from tasks_app.tests.conftest import make_plan, task_data
from tasks_app.tests.schedule_helpers import plan_spec
from tests.browser.conftest import PASSWORD
from tests.processes import WebProcess

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

LONG = "a-very-long-unbroken-identifier-that-would-push-a-table-cell-wide-" * 3


@pytest.fixture
def busy_session(agent_session: Any) -> Any:
    """A session with an accepted plan on the board and a pending approval."""
    plan = make_plan(
        agent_session,
        task_data("api", title="Add the endpoint " + LONG[:120]),
        task_data("ui", depends_on=["api"]),
    )
    # Test data only: accepted without dispatching, so the board shows rows at rest.
    Plan.objects.filter(pk=plan.pk).update(status=PlanStatus.ACCEPTED, accepted_at=timezone.now())
    RiskDecision.objects.create(
        session=agent_session,
        tool="run_command",
        input_normalized={"command": "pip install " + LONG},
        input_hash="h",
        risk_class="install",
        decision="ask",
        rule="install-needs-approval",
        reason="installs a package " + LONG,
        work_mode="build",
        run_control="autonomous",
        permission_profile="normal",
        model_mode="smart",
        surface="web",
        review_status=ReviewStatus.PENDING,
    )
    schedule_create(
        project=agent_session.project, spec=plan_spec(), actor=Actor.of(agent_session.created_by)
    )
    return agent_session


@pytest.fixture
def superuser(staff_user: User) -> User:
    User.objects.filter(pk=staff_user.pk).update(is_superuser=True)
    return staff_user


def _login(browser: Browser, web: WebProcess, user: User, width: int, height: int) -> Page:
    page = browser.new_context(viewport={"width": width, "height": height}).new_page()
    page.goto(web.url + "/login/")
    page.fill("input[name=username]", user.get_username())
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(web.url + "/")
    return page


def _pages(session: Any) -> dict[str, str]:
    return {
        "dashboard": "/",
        "projects": "/projects/",
        "session": f"/sessions/{session.pk}/",
        "board": f"/tasks/?session={session.pk}",
        "approvals": "/approvals/",
        "schedules": f"/projects/{session.project_id}/schedules/",
        "notifications": "/notifications/",
    }


def _nav_links(page: Page) -> list[str]:
    return page.eval_on_selector_all(
        "header nav a", "links => links.map(a => a.getAttribute('href'))"
    )


def test_pages_fit_a_phone_and_share_one_nav(
    busy_session: Any, user: User, web: WebProcess, browser: Browser
) -> None:
    page = _login(browser, web, user, 390, 844)
    navs = {}
    for name, path in _pages(busy_session).items():
        page.goto(web.url + path)
        page.wait_for_load_state("networkidle")
        page.screenshot(path=f"/tmp/basics-{name}-390.png", full_page=True)
        scroll_width, inner_width = page.evaluate(
            "[document.documentElement.scrollWidth, window.innerWidth]"
        )
        assert scroll_width <= inner_width, f"{name} scrolls sideways: {scroll_width}px"
        navs[name] = _nav_links(page)
    assert navs["dashboard"], "the nav has links"
    assert all(links == navs["dashboard"] for links in navs.values()), navs
    for wanted in ("/", "/projects/", "/tasks/", "/approvals/"):
        assert wanted in navs["session"]


def test_wide_screenshots(busy_session: Any, user: User, web: WebProcess, browser: Browser) -> None:
    page = _login(browser, web, user, 1280, 800)
    for name, path in _pages(busy_session).items():
        page.goto(web.url + path)
        page.wait_for_load_state("networkidle")
        page.screenshot(path=f"/tmp/basics-{name}-1280.png", full_page=True)
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), name


def test_the_admin_wears_the_apps_colours(
    busy_session: Any, superuser: User, user: User, web: WebProcess, browser: Browser
) -> None:
    page = _login(browser, web, superuser, 1280, 800)
    page.goto(f"{web.url}/admin/agents_app/agentsession/{busy_session.pk}/change/")
    page.screenshot(path="/tmp/basics-admin-session-1280.png", full_page=True)
    header = page.eval_on_selector("#header", "e => getComputedStyle(e).backgroundColor")
    assert header == "rgb(23, 26, 33)"  # sf.css's --panel
    # 404 with DEBUG off, in the app's layout
    page.goto(web.url + "/no/such/page/")
    page.screenshot(path="/tmp/basics-404-1280.png")
    assert page.locator("header nav a").count() >= 4
