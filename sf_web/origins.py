"""Which origins may open a websocket, and the host and origin settings behind that.

A browser sends the page's origin (``scheme://host[:port]``) with every websocket and
the session cookie along with it, whichever site's page opened it. Channels'
``AllowedHostsOriginValidator`` compares only the origin's host with
``ALLOWED_HOSTS``: a page on ``http://localhost:9999`` could open SF's websockets on
``http://localhost:8000`` with the user's cookie, and ``ALLOWED_HOSTS = ["*"]`` let any
origin in. ``OriginValidator`` decides as Django's CSRF check decides for a form: the
origin must be the request's own (the scheme it came in on, the ``Host`` it names,
port included, that host allowed by ``ALLOWED_HOSTS``) or one of
``CSRF_TRUSTED_ORIGINS`` (``https://*.example.com`` for subdomains, as in Django).

The MCP server's HTTP endpoint (``/mcp``, outside Django) gets the protection the MCP
specification asks against DNS rebinding from ``HttpOriginValidator``: the ``Host``
must be one of ``ALLOWED_HOSTS``, and an ``Origin``, which browsers send and other
clients (IDEs, agents) do not, must pass the same rule as a websocket's.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.http.request import split_domain_port, validate_host
from django.utils.http import is_same_domain

from sf_core.env import Env

HOST_EXAMPLE = "host names such as sf.example.com, .example.com (subdomains too) or *"
ORIGIN_EXAMPLE = "origins such as https://sf.example.com or http://localhost:8000"


class OriginValidator:
    """ASGI middleware: a websocket from an origin that is not allowed is closed at once."""

    def __init__(self, application: Any) -> None:
        self.application = application

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        if scope["type"] == "websocket" and not origin_allowed(scope):
            # Imported here: settings import this module, before Django is set up.
            from channels.security.websocket import WebsocketDenier

            return await WebsocketDenier()(scope, receive, send)
        return await self.application(scope, receive, send)


class HttpOriginValidator:
    """ASGI middleware for an HTTP endpoint outside Django: a request from a host that
    is not allowed, or with a browser's origin that is not, gets 403 at once."""

    def __init__(self, application: Any) -> None:
        self.application = application

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        refusal = http_origin_refusal(scope) if scope["type"] == "http" else ""
        if refusal:
            # Imported here: settings import this module, before Django is set up.
            from starlette.responses import Response

            from api_app.problems import PROBLEM_TYPE, problem

            body = problem(403, "forbidden", refusal).model_dump_json(exclude_none=True)
            answer = Response(body, status_code=403, media_type=PROBLEM_TYPE)
            return await answer(scope, receive, send)
        return await self.application(scope, receive, send)


def _origin_and_host(scope: dict[str, Any]) -> tuple[dict[bytes, bytes], str, str]:
    headers = {name.lower(): value for name, value in scope.get("headers", [])}
    origin = headers.get(b"origin", b"").decode("latin-1").strip().lower()
    host = headers.get(b"host", b"").decode("latin-1").strip().lower()
    return headers, origin, host


def origin_allowed(scope: dict[str, Any]) -> bool:
    """A websocket's origin (required) is the request's own or a trusted one."""
    headers, origin, host = _origin_and_host(scope)
    if not origin or not host or not _host_allowed(host):
        return False
    return _origin_trusted(scope, headers, origin, host)


def http_origin_refusal(scope: dict[str, Any]) -> str:
    """Why an HTTP request is refused (a host not allowed, an origin not trusted), or ''.
    No ``Origin`` is no browser: nothing to rebind."""
    headers, origin, host = _origin_and_host(scope)
    if not host or not _host_allowed(host):
        return f"host {host!r} is not one of SF_ALLOWED_HOSTS"
    if origin and not _origin_trusted(scope, headers, origin, host):
        return f"origin {origin!r} is neither this site nor one of SF_CSRF_TRUSTED_ORIGINS"
    return ""


def _origin_trusted(
    scope: dict[str, Any], headers: dict[bytes, bytes], origin: str, host: str
) -> bool:
    scheme = "https" if _secure(scope, headers) else "http"
    if origin == f"{scheme}://{host}" or origin in _trusted_exact():
        return True
    parts = urlsplit(origin)
    return any(
        is_same_domain(parts.netloc, pattern) for pattern in _trusted_subdomains(parts.scheme)
    )


def _host_allowed(host: str) -> bool:
    domain, _port = split_domain_port(host)
    allowed = list(settings.ALLOWED_HOSTS)
    if settings.DEBUG and not allowed:  # what Django's request.get_host() allows too
        allowed = [".localhost", "127.0.0.1", "[::1]"]
    return bool(domain) and validate_host(domain, allowed)


def _secure(scope: dict[str, Any], headers: dict[bytes, bytes]) -> bool:
    """The scheme the browser used: wss, or https at a proxy that says so (and that
    settings trust, as Django's ``request.is_secure()`` does)."""
    if scope.get("scheme") in ("wss", "https"):
        return True
    proxy_header = getattr(settings, "SECURE_PROXY_SSL_HEADER", None)
    if not proxy_header:
        return False
    name, secure_value = proxy_header
    header = name.removeprefix("HTTP_").replace("_", "-").lower().encode("latin-1")
    value = headers.get(header, b"").decode("latin-1").split(",")[0].strip()
    return bool(value) and value == secure_value


def _trusted_exact() -> set[str]:
    return {origin.lower() for origin in settings.CSRF_TRUSTED_ORIGINS if "*" not in origin}


def _trusted_subdomains(scheme: str) -> list[str]:
    patterns = []
    for origin in settings.CSRF_TRUSTED_ORIGINS:
        parts = urlsplit(origin.lower())
        if "*" in origin and parts.scheme == scheme:
            patterns.append(parts.netloc.removeprefix("*"))
    return patterns


def hosts_from_env(env: Env, name: str, default: list[str]) -> list[str]:
    """``ALLOWED_HOSTS`` from a comma-separated variable: bare host names, so that a
    URL pasted by mistake (``https://sf.example.com``) stops SF instead of matching
    nothing."""
    hosts = env.csv(name, default)
    for host in hosts:
        if host == "*":
            continue
        # Django matches the Host header without its port: an entry with one never matches.
        domain, port = split_domain_port(host)
        if not domain or port or domain == ".":
            raise ImproperlyConfigured(f"{name}: expected {HOST_EXAMPLE}, got {host!r}")
    return hosts


def origins_from_env(env: Env, name: str) -> list[str]:
    """``CSRF_TRUSTED_ORIGINS``: ``scheme://host[:port]``, nothing after (Django compares
    an origin with these exactly, so a path or a missing scheme would never match)."""
    origins = env.csv(name)
    for origin in origins:
        parts = urlsplit(origin)
        try:
            parts.port  # noqa: B018 - raises on a port that is not a number
        except ValueError:
            raise _bad_origin(name, origin) from None
        if (
            parts.scheme not in ("http", "https")
            or not parts.hostname
            or parts.path not in ("", "/")
            or parts.query
            or parts.fragment
            or parts.username is not None
        ):
            raise _bad_origin(name, origin)
    return [origin.rstrip("/") for origin in origins]


def _bad_origin(name: str, origin: str) -> ImproperlyConfigured:
    return ImproperlyConfigured(f"{name}: expected {ORIGIN_EXAMPLE}, got {origin!r}")
