"""Secret redaction before anything is stored, logged, broadcast or sent to a model.

The rules live in ``sf_native.redact`` (compiled once, keyword prefilter, entropy
check); this module applies them to text, to JSON-like payloads and to log records.
The project secrets this process holds (``sf_core.secrets``: ``SF_SECRET_<NAME>``) are
redacted by value as well, whatever they look like: the whole value, each of its
lines and each ``KEY=VALUE``'s value (a secret is often a whole ``.env``).
"""

from __future__ import annotations

import logging
from typing import Any

import sf_native
from sf_core.secrets import MIN_REDACTED_LENGTH, secret_values

SECRET_KIND = "project_secret"


def redact_text(text: str) -> str:
    if not text:
        return text
    return sf_native.redact(text, secret_rules()).text


def secret_rules() -> list[tuple[str, str]]:
    """One literal rule per piece of every project secret, longest first."""
    pieces: set[str] = set()
    for value in secret_values().values():
        pieces.add(value.strip())
        for line in value.splitlines():
            line = line.strip()
            pieces.add(line)
            if "=" in line and not line.startswith("#"):
                pieces.add(line.partition("=")[2].strip().strip("\"'"))
    kept = sorted((p for p in pieces if len(p) >= MIN_REDACTED_LENGTH), key=len, reverse=True)
    return [(SECRET_KIND, _literal(piece)) for piece in kept]


def _literal(text: str) -> str:
    """``text`` as a Rust regex matching exactly it (every non-alphanumeric escaped)."""
    return "".join(c if c.isascii() and c.isalnum() else f"\\x{{{ord(c):X}}}" for c in text)


def redact_payload(value: Any) -> Any:
    """Redact every string inside a JSON-like value (keys too)."""
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, dict):
        return {redact_text(str(k)): redact_payload(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_payload(item) for item in value]
    return value


class RedactingFilter(logging.Filter):
    """Rewrites each record's message with secrets redacted (installed on SF's loggers)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        redacted = redact_text(message)
        if redacted != message:
            record.msg, record.args = redacted, None
        if record.exc_info and record.exc_info[1] is not None:
            record.exc_text = redact_text(logging.Formatter().formatException(record.exc_info))
            record.exc_info = None
        return True
