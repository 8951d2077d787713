"""One rate limiter per provider, shared by every worker: "blocked until" per provider.

When a provider answers 429 with ``retry-after``, the router that got it records until
when the provider is blocked; every ``ModelRouter`` of the same provider (the litellm
provider prefix and the ``api_base``: one server, one key space) waits until then
before its next request, instead of each unit hammering the provider and collecting
its own 429. The time is wall-clock epoch seconds, shared through Redis
(``settings.REDIS_URL``) by every process; without Redis (embedded) an in-process
dict does, for the threads of the one process. The limiter never breaks a model call:
if Redis does not answer, nobody waits.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from typing import Any, Protocol

from django.conf import settings

from agents_app.runtime.litellm_import import litellm_module

logger = logging.getLogger("sf.ratelimit")
# After the installation's prefix (SF_CHANNELS_PREFIX, "sf" by default).
KEY_PREFIX = ":provider-blocked:"
# Keep a key a little longer than the wait it records, then let Redis forget it.
EXPIRY_MARGIN_MS = 1000
# Never wait longer than this on another unit's word (a bad retry-after header).
MAX_SHARED_WAIT = 600.0

# Set the key to the later of the stored and the new time (atomic in Redis).
_BLOCK_SCRIPT = """
local current = redis.call('GET', KEYS[1])
if current and tonumber(current) >= tonumber(ARGV[1]) then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
"""


def provider_key(model: str, endpoint: dict[str, Any]) -> str:
    """The limiter's key: the litellm provider prefix and the endpoint's ``api_base``."""
    provider = model.split("/", 1)[0] if "/" in model else _inferred_provider(model)
    return f"{provider}|{endpoint.get('api_base') or ''}"


def _inferred_provider(model: str) -> str:
    try:
        return str(litellm_module().get_llm_provider(model)[1])
    except Exception:  # litellm raises for a model it cannot map
        return model


class ProviderLimits(Protocol):
    def blocked_until(self, key: str) -> float:
        """Epoch seconds until which ``key`` is blocked (0: not blocked)."""

    def block(self, key: str, until: float) -> None:
        """Block ``key`` until ``until`` (epoch seconds), unless blocked longer already."""

    def clear(self) -> None:
        """Forget every block (tests)."""


class LocalLimits:
    """The embedded limiter: a dict, shared by the threads of this process."""

    def __init__(self) -> None:
        self._until: dict[str, float] = {}
        self._lock = threading.Lock()

    def blocked_until(self, key: str) -> float:
        with self._lock:
            return self._until.get(key, 0.0)

    def block(self, key: str, until: float) -> None:
        with self._lock:
            self._until[key] = max(until, self._until.get(key, 0.0))

    def clear(self) -> None:
        with self._lock:
            self._until.clear()


class RedisLimits:
    """The team limiter: one Redis key per provider, with an expiry."""

    def __init__(self, url: str) -> None:
        import redis

        self._redis = redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2)
        self._prefix = getattr(settings, "SF_CHANNELS_PREFIX", "sf") + KEY_PREFIX
        self._script = self._redis.register_script(_BLOCK_SCRIPT)

    def blocked_until(self, key: str) -> float:
        try:
            value = self._redis.get(self._key(key))
        except Exception as exc:  # never block a model call on the limiter
            logger.warning("provider rate limiter: Redis did not answer: %s", exc)
            return 0.0
        return float(value) if value else 0.0

    def block(self, key: str, until: float) -> None:
        ttl_ms = max(1, int((until - time.time()) * 1000)) + EXPIRY_MARGIN_MS
        try:
            self._script(keys=[self._key(key)], args=[repr(until), ttl_ms])
        except Exception as exc:
            logger.warning("provider rate limiter: Redis did not answer: %s", exc)

    def _key(self, key: str) -> str:
        return self._prefix + hashlib.sha256(key.encode()).hexdigest()[:32]

    def clear(self) -> None:
        try:
            for name in self._redis.scan_iter(match=f"{self._prefix}*"):
                self._redis.delete(name)
        except Exception as exc:
            logger.warning("provider rate limiter: Redis did not answer: %s", exc)


_shared: dict[str | None, ProviderLimits] = {}
_shared_lock = threading.Lock()


def provider_limits() -> ProviderLimits:
    """The limiter of this process: Redis when ``REDIS_URL`` is set, else a dict."""
    url = getattr(settings, "REDIS_URL", None)
    with _shared_lock:
        if url not in _shared:
            _shared[url] = RedisLimits(url) if url else LocalLimits()
        return _shared[url]


def provider_limits_clear() -> None:
    """Forget every block of the limiters in use (tests: one test's 429 is not the next's)."""
    with _shared_lock:
        limiters = list(_shared.values())
    for limiter in limiters:
        limiter.clear()
