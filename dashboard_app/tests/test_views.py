from __future__ import annotations

import pytest
from django.test import Client, override_settings
from django.urls import reverse

pytestmark = pytest.mark.django_db


def test_the_dashboard_requires_login(client: Client) -> None:
    response = client.get(reverse("dashboard"))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


def test_logging_in_leads_to_the_dashboard(client: Client, user: object) -> None:
    response = client.post(
        reverse("login"), {"username": "ada", "password": "correct horse 42"}, follow=True
    )
    assert response.redirect_chain[-1][0] == reverse("dashboard")
    assert b'id="system-status"' in response.content


def test_a_wrong_password_is_refused_with_a_message(client: Client, user: object) -> None:
    response = client.post(reverse("login"), {"username": "ada", "password": "nope"})
    assert response.status_code == 200
    assert "didn't match" in response.content.decode()


def test_the_dashboard_shell_loads_htmx_and_the_websocket(logged_in_client: Client) -> None:
    html = logged_in_client.get(reverse("dashboard")).content.decode()
    assert "django_htmx/htmx-2.min.js" in html
    assert "django_htmx/ext/hx-ws-2.min.js" in html
    assert 'ws-connect="/ws/status/"' in html
    assert 'hx-headers=\'{"x-csrftoken": "' in html
    assert "cdn" not in html.lower()


def test_the_dashboard_lists_recent_sessions_with_their_badges(
    logged_in_client: Client, agent_session: object
) -> None:
    html = logged_in_client.get(reverse("dashboard")).content.decode()
    assert f'data-session="{agent_session.pk}"' in html  # type: ignore[attr-defined]
    assert reverse("session-detail", args=[agent_session.pk]) in html  # type: ignore[attr-defined]
    assert "badge-part" in html


def test_the_vendored_htmx_is_served(logged_in_client: Client) -> None:
    response = logged_in_client.get("/static/django_htmx/htmx-2.min.js")
    try:
        assert response.status_code == 200
        assert b"htmx" in b"".join(response.streaming_content)  # type: ignore[attr-defined]
    finally:
        response.close()


def test_healthz_reports_the_services(client: Client) -> None:
    response = client.get(reverse("healthz"))
    assert response.status_code == 200
    assert response.json() == {"ok": True, "database": True, "broker": True, "native": True}


@override_settings(REDIS_URL="redis://127.0.0.1:1/0")
def test_healthz_is_503_when_the_broker_is_down(client: Client) -> None:
    response = client.get(reverse("healthz"))
    assert response.status_code == 503
    assert response.json()["broker"] is False
