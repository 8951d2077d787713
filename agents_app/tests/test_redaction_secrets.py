"""Project secrets (``SF_SECRET_<NAME>``) are redacted by value, whatever they look like."""

from __future__ import annotations

import pytest

from agents_app.gate.redaction import redact_payload, redact_text
from sf_core.secrets import SecretMissing, secret_value, secret_values


def test_a_secret_value_its_lines_and_its_values_are_redacted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SF_SECRET_APP_ENV", 'DB_PASSWORD="plain words 42"\nMODE=developer\n')
    text = 'DB_PASSWORD="plain words 42"\nMODE=developer\nthe password is plain words 42.'
    redacted = redact_text(text)
    assert "plain words 42" not in redacted
    assert "developer" not in redacted
    assert redacted.count("[REDACTED:project_secret]") == 2  # the whole value is one
    assert redact_text(redacted) == redacted
    assert "developer" not in str(redact_payload({"out": ["MODE=developer"]}))


def test_short_secrets_and_other_variables_are_left_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SF_SECRET_PIN", "1234")
    monkeypatch.setenv("NOT_A_SECRET", "visible-value")
    assert "PIN" not in secret_values()
    assert redact_text("pin 1234, visible-value") == "pin 1234, visible-value"


def test_a_missing_secret_is_named() -> None:
    with pytest.raises(SecretMissing, match="SF_SECRET_NOPE"):
        secret_value("NOPE", {})
