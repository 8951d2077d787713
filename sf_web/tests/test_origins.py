"""Websockets from another origin than the page's own are refused: scheme, host and port."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.test import override_settings

from conftest import websocket
from sf_web.origins import http_origin_refusal, origin_allowed
from sf_web.tests.test_settings import load_settings


def scope(origin: str | None, host: str | None, scheme: str = "ws", **headers: str) -> Any:
    pairs = [("origin", origin), ("host", host), *headers.items()]
    return {
        "type": "websocket",
        "scheme": scheme,
        "headers": [(n.encode(), v.encode()) for n, v in pairs if v is not None],
    }


async def connects(cookie: bytes, *, origin: bytes, host: bytes) -> bool:
    communicator = websocket("/ws/status/", cookie=cookie, origin=origin, host=host)
    connected, _ = await communicator.connect()
    await communicator.disconnect()
    return bool(connected)


@pytest.mark.asyncio
@pytest.mark.django_db(transaction=True)
async def test_the_pages_own_origin_connects_with_its_port(session_cookie: bytes) -> None:
    assert await connects(session_cookie, origin=b"http://localhost:8000", host=b"localhost:8000")


@pytest.mark.asyncio
@pytest.mark.django_db(transaction=True)
async def test_another_port_on_the_same_host_is_refused(session_cookie: bytes) -> None:
    # The review's reproduction: a page on :9999 opening SF's websocket with the cookie.
    assert not await connects(
        session_cookie, origin=b"http://localhost:9999", host=b"localhost:8000"
    )


@pytest.mark.asyncio
@pytest.mark.django_db(transaction=True)
@override_settings(ALLOWED_HOSTS=["*"])
async def test_allowed_hosts_star_no_longer_lets_any_origin_in(session_cookie: bytes) -> None:
    assert not await connects(session_cookie, origin=b"http://evil.example", host=b"sf.example")
    assert await connects(session_cookie, origin=b"http://sf.example", host=b"sf.example")


@pytest.mark.parametrize(
    ("origin", "host", "scheme", "allowed"),
    [
        ("http://localhost:8000", "localhost:8000", "ws", True),
        ("HTTP://LOCALHOST:8000", "localhost:8000", "ws", True),
        ("http://localhost:9999", "localhost:8000", "ws", False),
        ("http://localhost", "localhost:8000", "ws", False),
        ("https://localhost:8000", "localhost:8000", "ws", False),  # the scheme too
        ("https://localhost:8000", "localhost:8000", "wss", True),
        ("http://localhost:8000", "localhost:8000", "wss", False),
        ("null", "localhost:8000", "ws", False),
        (None, "localhost:8000", "ws", False),
        ("http://localhost:8000", None, "ws", False),
        ("http://evil.example:8000", "evil.example:8000", "ws", False),  # not an allowed host
    ],
)
def test_origin_is_compared_with_scheme_host_and_port(
    origin: str | None, host: str | None, scheme: str, allowed: bool
) -> None:
    assert origin_allowed(scope(origin, host, scheme)) is allowed


@override_settings(
    ALLOWED_HOSTS=["sf.example.com"],
    CSRF_TRUSTED_ORIGINS=["http://localhost:9000", "https://*.example.com"],
)
@pytest.mark.parametrize(
    ("origin", "allowed"),
    [
        ("http://localhost:9000", True),
        ("http://localhost:9001", False),
        ("https://app.example.com", True),
        ("https://app.example.com:8443", False),
        ("http://app.example.com", False),
        ("https://example.org", False),
    ],
)
def test_trusted_origins_are_matched_with_their_port(origin: str, allowed: bool) -> None:
    assert origin_allowed(scope(origin, "sf.example.com")) is allowed


@override_settings(ALLOWED_HOSTS=["sf.example.com"])
def test_https_at_a_trusted_proxy_counts_only_when_settings_trust_it() -> None:
    behind = scope("https://sf.example.com", "sf.example.com", x_forwarded_proto="https")
    behind["headers"] = [(n.replace(b"_", b"-"), v) for n, v in behind["headers"]]
    assert not origin_allowed(behind)
    with override_settings(SECURE_PROXY_SSL_HEADER=("HTTP_X_FORWARDED_PROTO", "https")):
        assert origin_allowed(behind)
        assert not origin_allowed(scope("https://sf.example.com", "sf.example.com"))


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"SF_ALLOWED_HOSTS": "https://sf.example.com"}, "SF_ALLOWED_HOSTS: expected host names"),
        ({"SF_ALLOWED_HOSTS": "localhost:8000"}, "SF_ALLOWED_HOSTS: expected host names"),
        (
            {"SF_CSRF_TRUSTED_ORIGINS": "sf.example.com"},
            "SF_CSRF_TRUSTED_ORIGINS: expected origins",
        ),
        (
            {"SF_CSRF_TRUSTED_ORIGINS": "https://sf.example.com/app"},
            "SF_CSRF_TRUSTED_ORIGINS: expected origins",
        ),
        (
            {"SF_CSRF_TRUSTED_ORIGINS": "http://localhost:80x"},
            "SF_CSRF_TRUSTED_ORIGINS: expected origins",
        ),
    ],
)
def test_hosts_and_origins_that_could_never_match_stop_sf(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, env: dict[str, str], message: str
) -> None:
    with pytest.raises(ImproperlyConfigured, match=message):
        load_settings(monkeypatch, tmp_path, **env)


def test_good_hosts_and_origins_are_kept(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    loaded = load_settings(
        monkeypatch,
        tmp_path,
        SF_ALLOWED_HOSTS="sf.example.com,.example.org,[::1],*",
        SF_CSRF_TRUSTED_ORIGINS="https://sf.example.com/,http://localhost:8000,https://*.example.org",
    )
    assert loaded["ALLOWED_HOSTS"] == ["sf.example.com", ".example.org", "[::1]", "*"]
    assert loaded["CSRF_TRUSTED_ORIGINS"] == [
        "https://sf.example.com",
        "http://localhost:8000",
        "https://*.example.org",
    ]


# --- /mcp: plain HTTP, where non-browser clients send no Origin ------------------------


@pytest.mark.parametrize(
    ("origin", "host", "refused"),
    [
        (None, "127.0.0.1:8000", ""),  # an IDE or agent: no Origin, nothing to rebind
        ("http://127.0.0.1:8000", "127.0.0.1:8000", ""),
        ("http://127.0.0.1:9999", "127.0.0.1:8000", "origin"),
        ("http://evil.example", "127.0.0.1:8000", "origin"),
        (None, "evil.example", "host"),  # DNS rebinding: a name SF does not serve
        ("http://evil.example", "evil.example", "host"),
        (None, None, "host"),
        ("https://ide.example.com", "127.0.0.1:8000", ""),  # a trusted origin
    ],
)
@override_settings(
    ALLOWED_HOSTS=["127.0.0.1", "localhost"], CSRF_TRUSTED_ORIGINS=["https://ide.example.com"]
)
def test_an_http_request_is_refused_for_its_host_or_a_foreign_origin(
    origin: str | None, host: str | None, refused: str
) -> None:
    found = http_origin_refusal({**scope(origin, host, "http"), "type": "http"})
    assert (found.split(" ")[0] if found else "") == refused
