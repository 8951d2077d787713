"""Secret redaction before anything is stored, logged, broadcast or sent to a model.

The rules live in ``sf_native.redact`` (compiled once, keyword prefilter, entropy
check); this module applies them to text, to JSON-like payloads and to log records.
"""

from __future__ import annotations

import logging
from typing import Any

import sf_native


def redact_text(text: str) -> str:
    if not text:
        return text
    return sf_native.redact(text).text


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
