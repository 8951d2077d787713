"""Work from issues, seen in the web (docs/forge.md, "Work from issues"): a labelled
issue on the fake forge (real HTTP) becomes a session; its page names the issue (a link
to it, its author, where it stands) and shows the plan SF made from it, waiting for a
person's review; the plan's page shows the issue's intent.

The sweep and the planning run before the browser opens (``test_forge_issues``' scripted
planner: no model), as the workers would have done."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Browser, expect

from conftest import grant
from tasks_app.features.issues.poll import issues_sweep
from tasks_app.models import ForgeIssue
from tasks_app.tests.test_engine import repo
from tasks_app.tests.test_forge_issues import (
    BODY,
    _fake_forge_allowed,
    planned,
    planner,
    project_on,
    sf_comments,
)
from tests.browser.conftest import logged_in_page
from tests.fake_forge import FakeForge, fake_forge
from tests.processes import WebProcess

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]
__all__ = ["_fake_forge_allowed", "fake_forge", "planner", "repo"]  # fixtures


@pytest.fixture
def issue_session(
    repo: Path, fake_forge: FakeForge, planner: list[str], user: User
) -> dict[str, Any]:
    """Issue #4 labelled ``sf``: taken by the sweep, planned, the plan commented."""
    project = project_on(repo, fake_forge)
    grant(user, project, "viewer")
    fake_forge.open_issue(4, "Say hello", BODY, labels=["sf"])
    assert issues_sweep() == 1
    row = ForgeIssue.objects.get()
    plan = planned(row)
    assert issues_sweep() == 1  # the plan's comment
    assert len(sf_comments(fake_forge, 4)) == 1
    return {"session": row.session_id, "plan": plan.pk, "url": row.url}


def test_the_session_page_names_the_issue_and_shows_its_plan(
    issue_session: dict[str, Any], user: User, web: WebProcess, browser: Browser
) -> None:
    session, plan = issue_session["session"], issue_session["plan"]
    page = logged_in_page(browser, web, user, f"/sessions/{session}/")
    expect(page.locator("h1")).to_contain_text("GitHub #4: Say hello")
    issue = page.locator("[data-forge-issue='4']")
    expect(issue).to_be_visible()
    expect(issue).to_have_attribute("data-issue-state", "proposed")
    expect(issue).to_contain_text("From GitHub issue #4 Say hello by rita")
    assert issue_session["url"], "the fake forge gives each issue its web address"
    expect(issue.locator("a")).to_have_attribute("href", issue_session["url"])
    proposed = page.locator(f"#plans-list li[data-plan='{plan}']")
    expect(proposed).to_have_attribute("data-status", "proposed")
    expect(proposed.locator("[data-task='hello']")).to_contain_text("Write hello.txt")

    proposed.locator(f"[data-review-plan='{plan}']").click()
    page.wait_for_url(f"{web.url}/plans/{plan}/")
    expect(page.locator("body")).to_contain_text("hello.txt says hello")
