"""The settings file, loaded fresh under different environments."""

from __future__ import annotations

import os
import runpy
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.core.exceptions import ImproperlyConfigured

SETTINGS_FILE = Path(django_settings.BASE_DIR) / "sf_web" / "settings.py"
MANAGE = Path(django_settings.BASE_DIR) / "manage.py"
PRODUCTION_SECRET = "q8#Zt!v2@Lr9$Wm4^Kp7&Xy1*Bn6(Hc3)Jd5-Fg0=Ts8+Qe2-Vu7~Ri4"
SF_VARIABLES = ("SF_", "DATABASE_URL", "REDIS_URL")


def load_settings(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, **env: str) -> dict[str, Any]:
    for name in list(os.environ):
        if name.startswith(SF_VARIABLES):
            monkeypatch.delenv(name)
    monkeypatch.setenv("SF_DATA_DIR", str(tmp_path / "data"))
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    # The settings star-import their auth part: read it afresh too (the module Django
    # already loaded comes back after the test).
    monkeypatch.delitem(sys.modules, "sf_web.settings_auth", raising=False)
    return runpy.run_path(str(SETTINGS_FILE))


def test_nothing_set_is_the_embedded_default(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    loaded = load_settings(monkeypatch, tmp_path)
    assert loaded["DATABASES"]["default"]["ENGINE"] == "django.db.backends.sqlite3"
    assert loaded["DATABASES"]["default"]["NAME"] == tmp_path / "data" / "sf.sqlite3"
    assert (tmp_path / "data").is_dir()
    assert loaded["CHANNEL_LAYERS"]["default"]["BACKEND"] == "channels.layers.InMemoryChannelLayer"
    assert loaded["CELERY_TASK_ALWAYS_EAGER"] is True
    assert loaded["DEBUG"] is False, "debug pages only with SF_DEBUG=1"
    assert loaded["SF_TEAM_MODE"] is False


@pytest.mark.parametrize(("value", "expected"), [("1", True), ("0", False), ("", False)])
def test_debug_is_off_unless_sf_debug_turns_it_on(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, value: str, expected: bool
) -> None:
    assert load_settings(monkeypatch, tmp_path, SF_DEBUG=value)["DEBUG"] is expected


def test_database_and_redis_urls_switch_to_team_mode(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    loaded = load_settings(
        monkeypatch,
        tmp_path,
        DATABASE_URL="postgres://sf:pw@db:5432/sf",
        REDIS_URL="redis://cache:6379/2",
    )
    assert loaded["DATABASES"]["default"]["ENGINE"] == "django.db.backends.postgresql"
    assert loaded["DATABASES"]["default"]["HOST"] == "db"
    layer = loaded["CHANNEL_LAYERS"]["default"]
    assert layer["BACKEND"] == "channels_redis.pubsub.RedisPubSubChannelLayer"
    assert layer["CONFIG"]["hosts"] == [{"address": "redis://cache:6379/2", "socket_timeout": 30}]
    assert loaded["CELERY_BROKER_URL"] == "redis://cache:6379/2"
    assert loaded["CELERY_TASK_ALWAYS_EAGER"] is False
    assert not (tmp_path / "data").exists(), "team mode must not create the SQLite folder"


def test_the_list_channel_layer_is_a_choice_and_a_bad_one_is_named(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    team = {"DATABASE_URL": "postgres://sf@db/sf", "REDIS_URL": "redis://cache:6379/2"}
    loaded = load_settings(monkeypatch, tmp_path, SF_CHANNEL_LAYER="lists", **team)
    layer = loaded["CHANNEL_LAYERS"]["default"]
    assert layer["BACKEND"] == "channels_redis.core.RedisChannelLayer"
    assert (layer["CONFIG"]["capacity"], layer["CONFIG"]["expiry"]) == (1000, 30)
    with pytest.raises(ImproperlyConfigured, match="SF_CHANNEL_LAYER"):
        load_settings(monkeypatch, tmp_path, SF_CHANNEL_LAYER="kafka", **team)


def test_the_web_server_borrows_connections_from_a_pool(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    team = {"DATABASE_URL": "postgres://sf@db/sf", "SF_DB_POOL_SIZE": "7"}
    elsewhere = load_settings(monkeypatch, tmp_path, **team)["DATABASES"]["default"]
    assert "pool" not in elsewhere["OPTIONS"]
    assert elsewhere["CONN_MAX_AGE"] == 60  # a worker keeps its connection for a unit
    monkeypatch.setitem(sys.modules, "daphne.cli", ModuleType("daphne.cli"))
    served = load_settings(monkeypatch, tmp_path, **team)["DATABASES"]["default"]
    assert served["OPTIONS"]["pool"] == {"min_size": 2, "max_size": 7, "timeout": 30}
    assert served["CONN_MAX_AGE"] == 0  # Django refuses persistent connections with a pool
    monkeypatch.delitem(sys.modules, "daphne.cli")
    asked = load_settings(monkeypatch, tmp_path, SF_DB_POOL="1", **team)["DATABASES"]["default"]
    assert asked["OPTIONS"]["pool"]["max_size"] == 7


@pytest.mark.parametrize(
    ("env", "message"),
    [
        (
            {"SF_PROFILE": "staging"},
            "SF_PROFILE: expected one of development, production, got 'staging'",
        ),
        ({"SF_DEBUG": "perhaps"}, "SF_DEBUG: expected a boolean"),
        (
            {"DATABASE_URL": "sqlite:///x.db"},
            "DATABASE_URL: expected a postgres:// or postgresql:// URL",
        ),
        ({"REDIS_URL": "localhost:6379"}, "REDIS_URL: expected a redis:// or rediss:// URL"),
        ({"SF_SECRET_KEY": "too-short"}, "SF_SECRET_KEY: must be at least 50 characters long"),
        ({"SF_WORKER_HEARTBEAT": "0.1s"}, "SF_WORKER_HEARTBEAT: must be at least 1s, got 0.1s"),
        ({"SF_UNIT_HARD_TIMEOUT": "1 week"}, "SF_UNIT_HARD_TIMEOUT: expected a duration"),
        ({"SF_UNIT_HARD_TIMEOUT": "13h"}, "SF_UNIT_HARD_TIMEOUT: must be at most 43200s"),
        (
            {"SF_DB_CONN_MAX_AGE": "-5", "DATABASE_URL": "postgres://h/db"},
            "SF_DB_CONN_MAX_AGE: must be at least 0",
        ),
        ({"SF_LOG_LEVEL": "LOUD"}, "SF_LOG_LEVEL: expected one of DEBUG, INFO"),
        ({"SF_ALLOWED_HOSTS": "a,,b"}, "SF_ALLOWED_HOSTS: expected a comma-separated list"),
        ({"SF_PROFILE": "production"}, "SF_SECRET_KEY: required when SF_PROFILE=production"),
        (
            {"SF_PROFILE": "production", "SF_SECRET_KEY": PRODUCTION_SECRET},
            "SF_ALLOWED_HOSTS: required when SF_PROFILE=production",
        ),
    ],
)
def test_a_bad_value_fails_with_the_variable_name(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, env: dict[str, str], message: str
) -> None:
    with pytest.raises(ImproperlyConfigured) as caught:
        load_settings(monkeypatch, tmp_path, **env)
    assert str(caught.value).startswith(message)


def test_the_production_profile_hardens_security(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    loaded = load_settings(
        monkeypatch,
        tmp_path,
        SF_PROFILE="production",
        SF_SECRET_KEY=PRODUCTION_SECRET,
        SF_ALLOWED_HOSTS="sf.example.com",
    )
    assert loaded["DEBUG"] is False
    assert loaded["SESSION_COOKIE_SECURE"]
    assert loaded["CSRF_COOKIE_SECURE"]
    assert loaded["SECURE_SSL_REDIRECT"] is True
    assert loaded["SECURE_HSTS_SECONDS"] >= 31536000


def _manage(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(SF_VARIABLES)}
    return subprocess.run(
        [sys.executable, str(MANAGE), *args],
        env={**clean, "SF_ENV_FILE": "", **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.slow
def test_start_up_stops_on_a_bad_value_with_its_name(tmp_path: Path) -> None:
    result = _manage("check", SF_DATA_DIR=str(tmp_path), SF_WORKER_HEARTBEAT="soon")
    assert result.returncode != 0
    assert "SF_WORKER_HEARTBEAT: expected a duration" in result.stderr


@pytest.mark.slow
@pytest.mark.django_db
def test_the_production_profile_passes_check_deploy(tmp_path: Path) -> None:
    # The test database, not the checkout's: the checks read every project's policy
    # (sf.W016), and the checkout's database holds whatever benchmarks left in it.
    from tests.processes import child_database_url

    result = _manage(
        "check",
        "--deploy",
        "--fail-level",
        "WARNING",
        SF_DATA_DIR=str(tmp_path),
        SF_PROFILE="production",
        SF_SECRET_KEY=PRODUCTION_SECRET,
        SF_ALLOWED_HOSTS="sf.example.com",
        DATABASE_URL=child_database_url("check-deploy"),
        REDIS_URL=os.environ["REDIS_URL"],
    )
    assert result.returncode == 0, result.stderr + result.stdout
    assert "no issues" in result.stdout


@pytest.mark.slow
def test_the_development_profile_fails_check_deploy(tmp_path: Path) -> None:
    result = _manage("check", "--deploy", "--fail-level", "WARNING", SF_DATA_DIR=str(tmp_path))
    assert result.returncode != 0
    assert "security.W004" in result.stderr  # no HSTS outside production
