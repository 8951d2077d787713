"""A person reads why a skill is invalid, fixes the file and syncs from the page."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Browser, expect

from skills_app.sync import project_skills_sync
from skills_app.tests.helpers import write_skill
from tests.browser.conftest import logged_in_page
from tests.processes import WebProcess

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]
SHOTS = Path(tempfile.gettempdir())


@pytest.fixture
def broken_skill(project: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """One valid skill and one whose frontmatter has a field SKILL.md does not know.
    (The web process has an empty user-level skill folder of its own, also named
    user-skills.)"""
    monkeypatch.setenv("SF_USER_SKILLS", str(tmp_path / "user-skills"))
    repo = Path(project.repo_path)
    write_skill(repo, "release-notes")
    write_skill(repo, "deploy-check", extra="colour: blue\n")
    project_skills_sync(project)
    return project


def test_an_invalid_skill_is_fixed_and_synced_from_the_page(
    broken_skill: Any, user: User, web: WebProcess, browser: Browser
) -> None:
    page = logged_in_page(browser, web, user, f"/projects/{broken_skill.pk}/")
    page.click("[data-skills-link]")
    row = page.locator('tr[data-skill="deploy-check"]')
    expect(row).to_have_attribute("data-valid", "false")
    expect(row.locator("[data-problem]")).to_contain_text("colour")
    expect(page.locator("[data-invalid-notice]")).to_contain_text("deploy-check")
    page.screenshot(path=str(SHOTS / "skills-1-invalid.png"), full_page=True)

    write_skill(Path(broken_skill.repo_path), "deploy-check")  # the fix, on disk
    page.evaluate("window.__notReloaded = true")
    page.click("#skills-sync")
    expect(row).to_have_attribute("data-valid", "true")
    expect(page.locator("[data-invalid-notice]")).to_have_count(0)
    expect(page.locator("[data-sync-report]").first).to_contain_text("1 changed")
    expect(page.locator("[data-sync-report]").last).to_contain_text("user-skills: 0 added")
    assert page.evaluate("window.__notReloaded") is True
    page.screenshot(path=str(SHOTS / "skills-2-valid.png"), full_page=True)

    row.locator("a").first.click()  # the skill's own page: its body rendered
    expect(page.locator("#skill-body h3")).to_have_text("Steps")
    expect(page.locator("#skill-body code").first).to_have_text("CHANGES.md")
    page.screenshot(path=str(SHOTS / "skills-3-detail.png"), full_page=True)
