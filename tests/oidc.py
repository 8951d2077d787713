"""A real OpenID Connect provider for the single sign-on tests, on loopback.

``oidc-provider-mock`` (PyPI; Flask and Authlib underneath) serves discovery, a JWKS
with an RSA key it generates at start, the authorization form, the token endpoint
(RS256-signed id_tokens carrying the nonce it was sent) and userinfo, over real HTTP
on a free port of this machine. A person's claims (username, groups) are set through
its ``PUT /users/<sub>``, as a directory would change them.

``TamperingTokenProxy`` stands between SF and the token endpoint and rewrites a claim
of the id_token it passes on while keeping the provider's signature: what an attacker
who could change a token in transit would send.
"""

from __future__ import annotations

import base64
import json
import threading
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import requests

with warnings.catch_warnings():
    # It imports authlib.jose, which Authlib now calls deprecated (its own dependency);
    # authlib.deprecate's import puts an "always" filter first, so it goes before ours.
    import authlib.deprecate  # noqa: F401

    warnings.simplefilter("ignore", DeprecationWarning)
    from oidc_provider_mock import run_server_in_thread

CLIENT_ID = "sf-test-client"
CLIENT_SECRET = "sf-test-secret"


@dataclass
class Provider:
    issuer: str

    def set_user(self, sub: str, claims: dict[str, Any]) -> None:
        answer = requests.put(f"{self.issuer}/users/{sub}", json=claims, timeout=10)
        assert answer.status_code == 204, answer.text

    def discovery(self) -> dict[str, Any]:
        answer = requests.get(f"{self.issuer}/.well-known/openid-configuration", timeout=10)
        answer.raise_for_status()
        document: dict[str, Any] = answer.json()
        return document


@contextmanager
def oidc_provider() -> Iterator[Provider]:
    """The provider, started for one test and stopped after it."""
    with run_server_in_thread(require_nonce=True) as server:
        yield Provider(issuer=f"http://localhost:{server.server_port}")


def sso_settings(settings: Any, provider: Provider, **overrides: Any) -> None:
    """Turn single sign-on on in this process's settings (pytest-django's fixture)."""
    from sf_web.sso_discovery import discovery_forget

    discovery_forget()
    values = {
        "SF_SSO_ENABLED": True,
        "SF_OIDC_CLIENT_ID": CLIENT_ID,
        "OIDC_RP_CLIENT_ID": CLIENT_ID,
        "OIDC_RP_CLIENT_SECRET": CLIENT_SECRET,
        "SF_OIDC_ISSUER": provider.issuer,
        "SF_OIDC_PROVIDER_NAME": "TestIdP",
        "AUTHENTICATION_BACKENDS": [
            "axes.backends.AxesStandaloneBackend",
            "django.contrib.auth.backends.ModelBackend",
            "sf_web.sso.SsoBackend",
        ],
        **overrides,
    }
    for name, value in values.items():
        setattr(settings, name, value)


def sso_web_env(provider: Provider, **overrides: str) -> dict[str, str]:
    """The same, as the environment of an SF web process."""
    return {
        "SF_OIDC_CLIENT_ID": CLIENT_ID,
        "SF_OIDC_CLIENT_SECRET": CLIENT_SECRET,
        "SF_OIDC_ISSUER": provider.issuer,
        "SF_OIDC_PROVIDER_NAME": "TestIdP",
        **overrides,
    }


def with_query(url: str, **changes: str) -> str:
    """``url`` with some of its query parameters replaced."""
    parts = urlsplit(url)
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    query.update(changes)
    return urlunsplit(parts._replace(query=urlencode(query)))


def provider_authorize(authorize_url: str, sub: str) -> str:
    """What a person's browser does at the provider: submit the form as ``sub``; the
    URL the provider sends the browser back to (SF's callback)."""
    answer = requests.post(authorize_url, data={"sub": sub}, allow_redirects=False, timeout=10)
    assert answer.status_code == 302, answer.text[:500]
    return str(answer.headers["Location"])


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def forge_claims(id_token: str, change: Callable[[dict[str, Any]], None]) -> str:
    """The token with its payload changed and the provider's signature kept."""
    header, payload, signature = id_token.split(".")
    claims = json.loads(_unb64(payload))
    change(claims)
    return ".".join([header, _b64(json.dumps(claims).encode()), signature])


@contextmanager
def tampering_token_proxy(
    token_endpoint: str, change: Callable[[dict[str, Any]], None]
) -> Iterator[str]:
    """A token endpoint on loopback that forwards to the real one and rewrites the
    id_token's claims with ``change``; yields its URL."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            headers = {"Content-Type": self.headers.get("Content-Type", "")}
            if self.headers.get("Authorization"):
                headers["Authorization"] = self.headers["Authorization"]
            answer = requests.post(token_endpoint, data=body, headers=headers, timeout=10)
            document = answer.json()
            if "id_token" in document:
                document["id_token"] = forge_claims(document["id_token"], change)
            out = json.dumps(document).encode()
            self.send_response(answer.status_code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    with _serve(Handler) as url:
        yield f"{url}/token"


@contextmanager
def copied_discovery(document: dict[str, Any]) -> Iterator[str]:
    """Another issuer URL on loopback whose discovery document is a copy of
    ``document`` (which names its own issuer): yields that URL."""
    body = json.dumps(document).encode()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    with _serve(Handler) as url:
        yield url


@contextmanager
def _serve(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
