from __future__ import annotations

import sys

import pytest
from django.core.checks import Error
from django.test import override_settings

from sf_web import checks


def ids(messages: list) -> list[str]:  # type: ignore[type-arg]
    return [message.id for message in messages]


def test_a_built_native_module_passes() -> None:
    assert checks.check_native_module(None) == []


def test_a_missing_native_module_is_sf_e001(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sf_native", None)  # makes `import sf_native` fail
    messages = checks.check_native_module(None)
    assert ids(messages) == ["sf.E001"]
    assert isinstance(messages[0], Error)
    assert "scripts/setup.sh" in (messages[0].hint or "")


def test_a_reachable_broker_passes() -> None:
    assert checks.check_broker(None) == []


@override_settings(REDIS_URL="redis://127.0.0.1:1/0")
def test_an_unreachable_broker_in_team_mode_is_sf_e002() -> None:
    messages = checks.check_broker(None)
    assert ids(messages) == ["sf.E002"]
    assert "REDIS_URL" in messages[0].msg


@override_settings(REDIS_URL=None)
def test_no_broker_is_not_checked_in_embedded_mode() -> None:
    assert checks.check_broker(None) == []


@override_settings(
    PRODUCTION=True, DEBUG=True, SF_TEAM_MODE=False, REDIS_URL=None, SECRET_KEY="k" * 60
)
def test_insecure_production_settings_are_reported() -> None:
    assert ids(checks.check_production_profile(None)) == ["sf.E003", "sf.W001", "sf.W002"]


@override_settings(PRODUCTION=True, DEBUG=False, SECRET_KEY="sf-development-only-" + "x" * 40)
def test_the_development_key_in_production_is_sf_e004() -> None:
    assert "sf.E004" in ids(checks.check_production_profile(None))


@override_settings(PRODUCTION=False, DEBUG=True)
def test_the_development_profile_is_not_judged_as_production() -> None:
    assert checks.check_production_profile(None) == []


@override_settings(SF_TEAM_MODE=True, REDIS_URL=None)
def test_postgres_without_redis_is_sf_w003() -> None:
    assert ids(checks.check_team_mode_pairing(None)) == ["sf.W003"]
