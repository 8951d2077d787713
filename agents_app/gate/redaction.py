"""Secret redaction before anything is stored, logged, broadcast or sent to a model.

The rules live in ``sf_native.redact`` (compiled once, keyword prefilter, entropy
check); this module applies them to text, to JSON-like payloads and to log records.
The project secrets this process holds (``sf_core.secrets``: ``SF_SECRET_<NAME>``) are
redacted by value as well, whatever they look like: the whole value, each of its
lines and each ``KEY=VALUE``'s value (a secret is often a whole ``.env``).
"""

from __future__ import annotations

import functools
import logging
from typing import Any

import sf_native
from sf_core.secrets import MIN_REDACTED_LENGTH, secret_values

SECRET_KIND = "project_secret"


def redact_text(text: str, rules: list[tuple[str, str]] | None = None) -> str:
    """``text`` with every secret replaced; ``rules``: ``secret_rules()`` if given."""
    if not text:
        return text
    return sf_native.redact(text, secret_rules() if rules is None else rules).text


def secret_rules() -> list[tuple[str, str]]:
    """One literal rule per piece of every project secret, longest first. Built once per
    set of secrets: reading them from the environment took 30 µs, paid for every string
    of every payload (some fifty a tool call)."""
    return _rules_for(_secret_items())


def _secret_items() -> tuple[tuple[str, str], ...]:
    return tuple(sorted(secret_values().items()))


@functools.lru_cache(maxsize=16)
def _rules_for(items: tuple[tuple[str, str], ...]) -> list[tuple[str, str]]:
    pieces: set[str] = set()
    for _, value in items:
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


def redact_payload(value: Any, rules: list[tuple[str, str]] | None = None) -> Any:
    """Redact every string inside a JSON-like value (keys too)."""
    rules = secret_rules() if rules is None else rules
    if isinstance(value, str):
        return redact_text(value, rules)
    if isinstance(value, dict):
        return {redact_text(str(k), rules): redact_payload(v, rules) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_payload(item, rules) for item in value]
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
