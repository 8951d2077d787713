"""Error pages in the app's layout, the CSRF page that says "reload", the favicon, and
the login wall in front of every page."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.template.loader import render_to_string
from django.test import Client, RequestFactory
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from django.views.defaults import server_error

pytestmark = pytest.mark.django_db

# Pages anyone may open: everything else must send an anonymous visitor to log in.
# Single sign-on's two steps are how an anonymous visitor logs in (404 while it is off).
PUBLIC = {"login", "logout", "healthz", "favicon", "sso-login", "sso-callback"}


def test_an_unknown_url_is_the_apps_404_without_the_url_conf(logged_in_client: Client) -> None:
    assert settings.DEBUG is False
    response = logged_in_client.get("/no/such/page/")
    assert response.status_code == 404
    html = response.content.decode()
    assert 'class="topbar"' in html  # base.html's layout, with the nav
    assert 'href="/tasks/"' in html
    assert "There is nothing at this address" in html
    assert "URLconf" not in html
    assert "sf_web.urls" not in html


def test_the_500_page_renders_without_a_request_context() -> None:
    response = server_error(RequestFactory().get("/"))
    assert response.status_code == 500
    html = response.content.decode()
    assert 'class="topbar"' in html
    assert "SF hit an error it did not expect" in html


@pytest.mark.parametrize(
    ("template", "heading"),
    [("400.html", "could not read"), ("403.html", "You may not do this")],
)
def test_400_and_403_use_the_layout(template: str, heading: str) -> None:
    html = render_to_string(template)
    assert 'class="topbar"' in html
    assert heading in html


def test_a_stale_csrf_token_says_reload_the_page(user: User) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    response = client.post(
        reverse("logout"), HTTP_REFERER="http://testserver/projects/", HTTP_HOST="testserver"
    )
    assert response.status_code == 403
    assert response["X-SF-CSRF-Failure"] == "reload"  # base.html offers htmx a reload
    html = response.content.decode()
    assert "reload it" in html
    assert 'href="http://testserver/projects/"' in html
    assert 'class="topbar"' in html


def test_the_csrf_page_does_not_link_to_another_site(user: User) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    response = client.post(reverse("logout"), HTTP_REFERER="https://evil.example/")
    assert response.status_code == 403
    assert b"evil.example" not in response.content


def test_favicon_ico_leads_to_the_svg(client: Client) -> None:
    response = client.get("/favicon.ico")
    assert response.status_code == 301
    assert response["Location"] == "/static/sf/favicon.svg"
    assert b'rel="icon"' in client.get(reverse("login")).content


def _named_routes(patterns: list[URLPattern | URLResolver], prefix: str = "") -> list[str]:
    names: list[str] = []
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            if pattern.namespace in ("admin", "api"):
                # The admin has its own login; the API answers 401 problem+json to a
                # request without a token (api_app/tests/test_tokens.py).
                continue
            names += _named_routes(pattern.url_patterns, prefix)
        elif pattern.name:
            names.append(pattern.name)
    return names


def _url(name: str) -> str:
    pattern = get_resolver().reverse_dict.getlist(name)[0][0][0][1]
    return reverse(name, kwargs=dict.fromkeys(pattern, 1))


def test_every_page_sends_an_anonymous_visitor_to_log_in(client: Client) -> None:
    names = [n for n in _named_routes(get_resolver().url_patterns) if n not in PUBLIC]
    assert {"dashboard", "project-list", "session-detail", "task-board", "approvals"} <= set(names)
    for name in names:
        url = _url(name)
        # A view refuses the wrong method (405) before it asks who is there: use its own.
        response = client.get(url)
        if response.status_code == 405:
            response = client.post(url)
        assert response.status_code == 302, (name, response.status_code)
        assert response["Location"].startswith(reverse("login") + "?next="), name
