"""Production settings: one line for a bad setting, /healthz over http, sf.W004."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client, override_settings
from django.urls import reverse

from sf_web import checks

ROOT = Path(settings.BASE_DIR)
SECRET = "q8#Zt!v2@Lr9$Wm4^Kp7&Xy1*Bn6(Hc3)Jd5-Fg0=Ts8+Qe2-Vu7~Ri4"


def start(program: list[str], tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """``program`` in a shell with nothing SF set but ``env`` (no .sf/env either)."""
    shell = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("SF_", "DATABASE_URL", "REDIS_URL", "DJANGO_"))
    }
    return subprocess.run(
        [sys.executable, *program],
        cwd=ROOT,
        env={**shell, "SF_ENV_FILE": "", "SF_DATA_DIR": str(tmp_path), **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize(
    ("env", "setting"),
    [
        ({"SF_PROFILE": "production"}, "SF_SECRET_KEY: required when SF_PROFILE=production"),
        ({"SF_PROFILE": "production", "SF_SECRET_KEY": "short"}, "SF_SECRET_KEY: must be at least"),
        (
            {"SF_PROFILE": "production", "SF_SECRET_KEY": SECRET},
            "SF_ALLOWED_HOSTS: required when SF_PROFILE=production",
        ),
        (
            {"SF_PROFILE": "production", "SF_SECRET_KEY": SECRET, "SF_ALLOWED_HOSTS": "x.io:443"},
            "SF_ALLOWED_HOSTS: expected host names",
        ),
        ({"DATABASE_URL": "mysql://sf@db/sf"}, "DATABASE_URL: expected a postgres:// or"),
        ({"REDIS_URL": "redis://cache:port/0"}, "REDIS_URL: expected a URL with a numeric port"),
    ],
)
def test_manage_py_stops_with_one_line_naming_the_setting(
    tmp_path: Path, env: dict[str, str], setting: str
) -> None:
    result = start(["manage.py", "check"], tmp_path, **env)
    assert result.returncode == 1
    assert result.stderr.splitlines() == [result.stderr.strip()], result.stderr
    assert result.stderr.startswith(f"SF cannot start: {setting}"), result.stderr
    assert result.stdout == ""


def test_the_asgi_app_stops_with_one_line_too(tmp_path: Path) -> None:
    # What daphne does with sf_web.asgi:application: import it.
    result = start(["-c", "import sf_web.asgi"], tmp_path, SF_PROFILE="production")
    assert result.returncode == 1
    assert result.stderr == (
        "SF cannot start: SF_SECRET_KEY: required when SF_PROFILE=production "
        "(50 or more random characters)\n"
    )


def test_sf_debug_keeps_the_traceback_for_whoever_debugs_sf(tmp_path: Path) -> None:
    result = start(["manage.py", "check"], tmp_path, SF_PROFILE="production", SF_DEBUG="1")
    assert result.returncode == 1
    assert "Traceback" in result.stderr
    assert "SF_SECRET_KEY: required" in result.stderr


@pytest.mark.django_db
@override_settings(SECURE_SSL_REDIRECT=True)
def test_healthz_answers_over_http_while_pages_redirect_to_https(client: Client) -> None:
    # compose's health check asks http://127.0.0.1:8000/healthz from inside the container
    assert client.get(reverse("login")).status_code == 301
    response = client.get(reverse("healthz"))
    assert response.status_code == 200
    assert response.json()["ok"] is True


@override_settings(PRODUCTION=True, ALLOWED_HOSTS=["sf.example.com", "*"])
def test_allowed_hosts_star_in_production_is_sf_w004() -> None:
    messages = checks.check_allowed_hosts(None)
    assert [m.id for m in messages] == ["sf.W004"]
    assert "SF_ALLOWED_HOSTS" in messages[0].msg


@pytest.mark.parametrize(("production", "hosts"), [(True, ["sf.example.com"]), (False, ["*"])])
def test_named_hosts_or_development_are_not_warned(production: bool, hosts: list[str]) -> None:
    with override_settings(PRODUCTION=production, ALLOWED_HOSTS=hosts):
        assert checks.check_allowed_hosts(None) == []
