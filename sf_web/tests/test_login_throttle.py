"""Login throttling (django-axes): after N wrong passwords even the right one is refused."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from axes.models import AccessAttempt
from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command
from django.db.models import F
from django.test import Client
from django.urls import reverse

from conftest import PASSWORD
from sf_web.tests.test_settings import load_settings

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _three_failures(settings: Any) -> None:
    """Each wrong password costs a password hash (~0.5 s here): lock after three."""
    settings.AXES_FAILURE_LIMIT = 3


def log_in(client: Client, password: str, address: str = "10.0.0.7") -> int:
    response = client.post(
        reverse("login"), {"username": "ada", "password": password}, REMOTE_ADDR=address
    )
    return response.status_code


def lock_out(client: Client) -> None:
    for _ in range(settings.AXES_FAILURE_LIMIT):
        assert log_in(client, "wrong") in (200, 429)


def logged_in(client: Client) -> bool:
    return bool(client.get(reverse("dashboard")).status_code == 200)


def test_the_right_password_is_refused_after_too_many_wrong_ones(
    client: Client, user: User
) -> None:
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        assert log_in(client, "wrong") == 200  # the form again, with its error
    assert log_in(client, "wrong") == 429
    response = client.post(
        reverse("login"), {"username": "ada", "password": PASSWORD}, REMOTE_ADDR="10.0.0.7"
    )
    assert response.status_code == 429
    html = response.content.decode()
    assert "Too many failed logins" in html
    assert 'class="topbar"' in html  # the app's layout, not django-axes' bare text
    assert "15 minutes" in html
    assert not logged_in(client)


def test_after_the_cool_off_the_right_password_works(client: Client, user: User) -> None:
    lock_out(client)
    assert log_in(client, PASSWORD) == 429
    AccessAttempt.objects.update(
        attempt_time=F("attempt_time") - settings.AXES_COOLOFF_TIME - timedelta(seconds=1)
    )
    assert log_in(client, PASSWORD) == 302
    assert logged_in(client)


def test_an_admin_reset_lifts_the_lock(client: Client, user: User) -> None:
    lock_out(client)
    call_command("axes_reset_username", "ada", stdout=StringIO())
    assert log_in(client, PASSWORD) == 302


def test_the_lock_is_per_username_and_address(client: Client, user: User) -> None:
    lock_out(client)
    # The same person from another address, e.g. a colleague's typos behind one NAT
    # do not lock the others out, nor can a stranger lock ada out from elsewhere.
    assert log_in(client, PASSWORD, address="10.0.0.8") == 302


def test_a_success_forgets_the_earlier_failures(client: Client, user: User) -> None:
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        log_in(client, "wrong")
    assert log_in(client, PASSWORD) == 302
    client.post(reverse("logout"))
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        assert log_in(client, "wrong") == 200


def test_the_admin_login_is_throttled_too(client: Client, staff_user: User) -> None:
    for _ in range(settings.AXES_FAILURE_LIMIT):
        client.post(reverse("admin:login"), {"username": "grace", "password": "wrong"})
    response = client.post(reverse("admin:login"), {"username": "grace", "password": PASSWORD})
    assert response.status_code == 429


def test_the_limit_and_cool_off_come_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    loaded = load_settings(
        monkeypatch, tmp_path, SF_LOGIN_FAILURE_LIMIT="3", SF_LOGIN_COOLOFF="90s"
    )
    assert loaded["AXES_FAILURE_LIMIT"] == 3
    assert loaded["AXES_COOLOFF_TIME"] == timedelta(seconds=90)
    with pytest.raises(ImproperlyConfigured, match="SF_LOGIN_FAILURE_LIMIT: must be at least 1"):
        load_settings(monkeypatch, tmp_path, SF_LOGIN_FAILURE_LIMIT="0")
