"""Project secrets: values kept in the workers' environment as ``SF_SECRET_<NAME>``.

Not in the repository, not in the database, never shown: a project policy names a
secret (``worktree.files[].secret``), a worker reads its value when it writes the file
into a worktree, and the redaction (``agents_app.gate.redaction``) replaces every
value found here wherever text is stored, logged, broadcast or sent to a model.
Commands never see these variables (only ``COMMAND_ENV_KEEP`` reaches them).
See docs/worktree-environment.md for why the environment and not a table.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from sf_core.errors import SfError

SECRET_PREFIX = "SF_SECRET_"
# Shorter values are not redacted by value (they would match ordinary words).
MIN_REDACTED_LENGTH = 6


class SecretMissing(SfError):
    """A policy names a secret this worker does not have."""


def secret_value(name: str, environ: Mapping[str, str] | None = None) -> str:
    """The value of secret ``name`` (``SF_SECRET_<NAME>``), or ``SecretMissing``."""
    env = os.environ if environ is None else environ
    value = env.get(SECRET_PREFIX + name)
    if not value:
        raise SecretMissing(f"secret {name} is not set on this worker ({SECRET_PREFIX}{name})")
    return value


def secret_values(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Every secret this process holds, by name (for redaction)."""
    if environ is None and isinstance(getattr(os.environ, "_data", None), dict):
        # CPython keeps the environment as bytes; decoding every variable to find the
        # few secrets cost 30 µs, and redaction asks before every text it redacts.
        prefix = SECRET_PREFIX.encode()
        raw = os.environ._data  # type: ignore[attr-defined]
        keys = [os.fsdecode(key) for key in raw if key.startswith(prefix)]
        environ = {key: os.environ[key] for key in keys}
    env = os.environ if environ is None else environ
    return {
        key.removeprefix(SECRET_PREFIX): value
        for key, value in env.items()
        if key.startswith(SECRET_PREFIX) and len(value) >= MIN_REDACTED_LENGTH
    }
