"""Small typed readers for settings that come from the environment.

Every reader takes the variable's name, returns a typed value and raises
``ImproperlyConfigured`` naming the variable and what is wrong with it, so a
bad value stops SF at start-up instead of being guessed at later.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from urllib.parse import parse_qsl, unquote, urlsplit

from django.core.exceptions import ImproperlyConfigured

_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$")
_DURATION_UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400}
_ENV_LINE = re.compile(r"^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$")
ENV_FILE_VARIABLE = "SF_ENV_FILE"


def env_file_load(path: Path, environ: MutableMapping[str, str] | None = None) -> dict[str, str]:
    """Read ``KEY=VALUE`` lines from ``path`` into the environment; return what was set.

    A variable already in the environment wins over the file, so one command can
    override a checkout's settings. Blank lines and ``#`` comments are skipped,
    ``export KEY=VALUE`` is accepted (the file is also sourced by the scripts), and a
    value in matching single or double quotes loses them (no escapes, no ``$``
    expansion). A line that is none of these raises ``ImproperlyConfigured`` naming
    the file and line; the line itself is not shown because it may hold a secret.
    """
    target = os.environ if environ is None else environ
    loaded: dict[str, str] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        parsed = _env_file_line(path, number, line)
        if parsed is None:
            continue
        key, value = parsed
        if key not in target:
            target[key] = loaded[key] = value
    return loaded


def env_file_load_checkout(root: Path) -> dict[str, str]:
    """What every entry point calls before Django reads the settings.

    It loads ``$SF_ENV_FILE`` if that is set, else ``<root>/.sf/env`` when present
    (``scripts/setup.sh`` writes it). ``SF_ENV_FILE=`` (empty) loads nothing: the
    embedded mode, and the test suite, which must not read a developer's file.
    """
    chosen = os.environ.get(ENV_FILE_VARIABLE)
    if chosen is not None:
        return env_file_load(Path(chosen)) if chosen.strip() else {}
    default = root / ".sf" / "env"
    return env_file_load(default) if default.is_file() else {}


def _env_file_line(path: Path, number: int, line: str) -> tuple[str, str] | None:
    stripped = line.strip()
    if not stripped or stripped.startswith("#"):
        return None
    match = _ENV_LINE.match(stripped)
    if match is None:
        raise ImproperlyConfigured(
            f"{path}, line {number}: expected KEY=VALUE (a name of letters, digits and _, "
            "then =), a # comment or a blank line"
        )
    key, value = match.group(1), match.group(2).strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return key, value[1:-1]
    if value[:1] in ("'", '"'):
        raise ImproperlyConfigured(f"{path}, line {number}: {key}: the quote is not closed")
    return key, value


class Env:
    """Reads variables from one mapping (``os.environ`` unless told otherwise)."""

    def __init__(self, source: Mapping[str, str] | None = None) -> None:
        self.source = os.environ if source is None else source

    def raw(self, name: str) -> str | None:
        value = self.source.get(name)
        if value is None or value.strip() == "":
            return None
        return value.strip()

    def string(self, name: str, default: str = "") -> str:
        value = self.raw(name)
        return default if value is None else value

    def flag(self, name: str, default: bool) -> bool:
        value = self.raw(name)
        if value is None:
            return default
        if value.lower() in _TRUE:
            return True
        if value.lower() in _FALSE:
            return False
        raise _bad(name, value, "a boolean (one of 1/0, true/false, yes/no, on/off)")

    def integer(
        self, name: str, default: int, *, minimum: int | None = None, maximum: int | None = None
    ) -> int:
        value = self.raw(name)
        if value is None:
            return default
        try:
            number = int(value)
        except ValueError:
            raise _bad(name, value, "a whole number") from None
        _check_range(name, number, minimum, maximum)
        return number

    def number(
        self, name: str, *, minimum: float | None = None, maximum: float | None = None
    ) -> float | None:
        """A decimal number such as ``0.2`` (None when unset)."""
        value = self.raw(name)
        if value is None:
            return None
        try:
            number = float(value)
        except ValueError:
            raise _bad(name, value, "a number such as 0.2") from None
        _check_range(name, number, minimum, maximum)
        return number

    def choice(self, name: str, default: str, choices: Sequence[str]) -> str:
        value = self.raw(name)
        if value is None:
            return default
        if value not in choices:
            raise _bad(name, value, "one of " + ", ".join(choices))
        return value

    def csv(self, name: str, default: Sequence[str] = ()) -> list[str]:
        value = self.raw(name)
        if value is None:
            return list(default)
        items = [item.strip() for item in value.split(",")]
        if any(not item for item in items):
            raise _bad(name, value, "a comma-separated list without empty items")
        return items

    def duration(
        self,
        name: str,
        default: timedelta,
        *,
        minimum: timedelta | None = None,
        maximum: timedelta | None = None,
    ) -> timedelta:
        """A duration such as ``90``, ``90s``, ``500ms``, ``5m``, ``1.5h`` or ``1d``.

        A bare number is seconds.
        """
        value = self.raw(name)
        if value is None:
            return default
        match = _DURATION.match(value)
        if match is None:
            raise _bad(name, value, "a duration such as 30, 30s, 500ms, 5m, 1h or 1d")
        amount, unit = float(match.group(1)), match.group(2) or "s"
        duration = timedelta(seconds=amount * _DURATION_UNITS[unit])
        _check_range(name, duration, minimum, maximum)
        return duration

    def secret(self, name: str, *, min_length: int) -> str | None:
        value = self.raw(name)
        if value is not None and len(value) < min_length:
            raise ImproperlyConfigured(
                f"{name}: must be at least {min_length} characters long (got {len(value)})"
            )
        return value

    def database_url(self, name: str) -> DatabaseUrl | None:
        value = self.raw(name)
        return None if value is None else parse_database_url(name, value)

    def http_url(self, name: str) -> str | None:
        """An ``http://`` or ``https://`` URL with a host (a model server's base URL)."""
        value = self.raw(name)
        if value is None:
            return None
        problem = http_url_problem(value)
        if problem:
            raise _bad(name, _mask(value), problem)
        _url_port(name, value)
        return value.rstrip("/")

    def redis_url(self, name: str) -> str | None:
        value = self.raw(name)
        if value is None:
            return None
        parts = urlsplit(value)
        if parts.scheme not in ("redis", "rediss"):
            raise _bad(name, _mask(value), "a redis:// or rediss:// URL")
        if not parts.hostname:
            raise _bad(name, _mask(value), "a URL with a host, e.g. redis://127.0.0.1:6379/0")
        _url_port(name, value)
        database = parts.path.lstrip("/")
        if database and not database.isdigit():
            raise _bad(name, _mask(value), "a URL whose path is a database number, e.g. /0")
        return value


@dataclass(frozen=True)
class DatabaseUrl:
    """A PostgreSQL connection parsed from ``postgres://user:pass@host:port/name?opts``."""

    name: str
    user: str
    password: str
    host: str
    port: int | None
    options: dict[str, str]

    def as_django(self) -> dict[str, object]:
        return {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": self.name,
            "USER": self.user,
            "PASSWORD": self.password,
            "HOST": self.host,
            "PORT": "" if self.port is None else str(self.port),
            "OPTIONS": dict(self.options),
        }


def parse_database_url(name: str, value: str) -> DatabaseUrl:
    parts = urlsplit(value)
    if parts.scheme not in ("postgres", "postgresql"):
        raise _bad(name, _mask(value), "a postgres:// or postgresql:// URL")
    database = unquote(parts.path.lstrip("/"))
    if not database or "/" in database:
        raise _bad(name, _mask(value), "a URL that names one database, e.g. postgres://host/sf")
    return DatabaseUrl(
        name=database,
        user=unquote(parts.username or ""),
        password=unquote(parts.password or ""),
        host=parts.hostname or "",
        port=_url_port(name, value),
        options=dict(parse_qsl(parts.query)),
    )


def http_url_problem(value: str) -> str:
    """What is wrong with ``value`` as an http(s) base URL; empty when nothing is."""
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https"):
        return "an http:// or https:// URL, e.g. http://127.0.0.1:8080/v1"
    if not parts.hostname:
        return "a URL with a host, e.g. http://127.0.0.1:8080/v1"
    try:
        parts.port  # noqa: B018 - raises on a port that is not a number
    except ValueError:
        return "a URL with a numeric port from 1 to 65535"
    return ""


def _url_port(name: str, value: str) -> int | None:
    try:
        return urlsplit(value).port
    except ValueError:
        raise _bad(name, _mask(value), "a URL with a numeric port from 1 to 65535") from None


def _mask(value: str) -> str:
    """Hide a password so that an error message never prints one."""
    parts = urlsplit(value)
    if parts.password is None:
        return value
    return value.replace(f":{parts.password}@", ":***@", 1)


def _bad(name: str, value: str, expected: str) -> ImproperlyConfigured:
    return ImproperlyConfigured(f"{name}: expected {expected}, got {value!r}")


def _check_range(name: str, value: object, minimum: object, maximum: object) -> None:
    if minimum is not None and value < minimum:  # type: ignore[operator]
        raise ImproperlyConfigured(f"{name}: must be at least {_show(minimum)}, got {_show(value)}")
    if maximum is not None and value > maximum:  # type: ignore[operator]
        raise ImproperlyConfigured(f"{name}: must be at most {_show(maximum)}, got {_show(value)}")


def _show(value: object) -> str:
    if isinstance(value, timedelta):
        return f"{value.total_seconds():g}s"
    return str(value)
