"""Single sign-on in Chromium: "Log in with <provider>" on SF's login page, the
provider's own form, and back on the dashboard as a new person with the role their
group maps to. SF is a real daphne configured through its environment, the provider
a real one on loopback (tests/oidc.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from django.urls import reverse
from playwright.sync_api import Browser, expect, sync_playwright

from agents_app.models import Project, Role, SsoGroupRole
from tests.oidc import Provider, oidc_provider, sso_web_env
from tests.processes import WebProcess, backends_of

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def provider() -> Iterator[Provider]:
    with oidc_provider() as running:
        yield running


@pytest.fixture
def sso_web(transactional_db: None, provider: Provider) -> Iterator[WebProcess]:
    """An SF web process of its own: single sign-on is configured at start-up."""
    server = WebProcess(extra_env=sso_web_env(provider))
    server.start()
    try:
        yield server
    finally:
        server.stop()
        assert backends_of(server.name) == 0


@pytest.fixture
def payments(transactional_db: None, tmp_path: Path) -> Project:
    """A project whose operators are the provider's group payments-devs."""
    project = Project.objects.create(name="payments", repo_path=str(tmp_path / "payments"))
    SsoGroupRole.objects.create(group="payments-devs", project=project, role=Role.OPERATOR)
    return project


@pytest.fixture
def chromium(payments: Project, sso_web: WebProcess, _shared_chromium: str) -> Iterator[Browser]:
    """After the database rows: while Playwright's loop runs in this thread, Django
    refuses ORM calls (see tests/browser/conftest.py)."""
    with sync_playwright() as playwright:
        connected = playwright.chromium.connect(_shared_chromium)
        try:
            yield connected
        finally:
            connected.close()


def test_log_in_with_the_provider_lands_on_the_dashboard(
    payments: Project, provider: Provider, sso_web: WebProcess, chromium: Browser
) -> None:
    provider.set_user(
        "carol-sub",
        {"preferred_username": "carol", "email": "carol@example.com", "groups": ["payments-devs"]},
    )
    page = chromium.new_context().new_page()
    page.goto(f"{sso_web.url}/login/")
    page.get_by_role("link", name="Log in with TestIdP").click()
    # The provider's own page: who to log in as.
    page.wait_for_url(f"{provider.issuer}/oauth2/authorize*")
    page.fill("input[name=sub]", "carol-sub")
    page.get_by_role("button", name="Authorize").click()
    page.wait_for_url(f"{sso_web.url}/")
    expect(page.get_by_role("button", name="Log out carol")).to_be_visible()
    expect(page.locator("select[name=project] option", has_text="payments")).to_have_count(1)
    # The role their group maps to, as the project's page tells them.
    page.goto(sso_web.url + reverse("project-detail", args=[payments.pk]))
    expect(page.locator("[data-role]")).to_have_attribute("data-role", "operator")
