"""A command sent from a page whose CSRF token went stale offers a reload, instead of
the click failing silently (htmx does not swap a 403 into the page)."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Browser, Dialog

from tests.browser.conftest import logged_in_page
from tests.processes import WebProcess

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_a_stale_token_on_an_htmx_post_offers_a_reload(
    agent_session: Any, user: User, web: WebProcess, browser: Browser
) -> None:
    page = logged_in_page(browser, web, user, f"/sessions/{agent_session.pk}/")
    messages: list[str] = []

    def answer(dialog: Dialog) -> None:
        messages.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", answer)
    # As if the person logged out and in again in another tab: the page's token is stale.
    page.context.clear_cookies()
    with page.expect_response(lambda response: response.status == 403):
        page.fill("#command-bar input[name=text]", "/status")
        page.click("#command-bar button[type=submit]")
    page.wait_for_timeout(300)
    assert messages
    assert "Reload it?" in messages[0]
