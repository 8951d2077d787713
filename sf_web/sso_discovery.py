"""The provider's endpoints: set one by one in the environment, or read from its
OpenID discovery document (``<issuer>/.well-known/openid-configuration``) the first
time a login needs one, then kept for an hour per process.

Read lazily, never at start-up or on a request that is not a single sign-on login: a
provider that is down must not stop SF from starting or a logged-in person's pages.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import requests
from django.conf import settings

from agents_app.services.sso import SsoRefused
from sf_core.env import http_url_problem

DISCOVERY_PATH = "/.well-known/openid-configuration"
DISCOVERY_TTL = 3600.0
# mozilla-django-oidc's setting -> the discovery document's field.
ENDPOINTS = {
    "OIDC_OP_AUTHORIZATION_ENDPOINT": "authorization_endpoint",
    "OIDC_OP_TOKEN_ENDPOINT": "token_endpoint",
    "OIDC_OP_USER_ENDPOINT": "userinfo_endpoint",
    "OIDC_OP_JWKS_ENDPOINT": "jwks_uri",
}

_lock = threading.Lock()
_documents: dict[str, tuple[float, dict[str, str]]] = {}


class SsoUnavailable(SsoRefused):
    """The provider could not be asked (down, misconfigured): not the person's fault."""

    status_code = 502


def sso_setting(name: str, *default: Any) -> Any:
    """A setting as mozilla-django-oidc asks for it, with an endpoint left unset read
    from the provider's discovery document."""
    value = getattr(settings, name, *default)
    if name in ENDPOINTS and not value:
        return discovery(settings.SF_OIDC_ISSUER)[ENDPOINTS[name]]
    return value


def discovery(issuer: str) -> dict[str, str]:
    """The endpoints the provider at ``issuer`` publishes (``SsoUnavailable`` if not)."""
    now = time.monotonic()
    with _lock:
        cached = _documents.get(issuer)
        if cached is not None and now - cached[0] < DISCOVERY_TTL:
            return cached[1]
    endpoints = _fetch(issuer)
    with _lock:
        _documents[issuer] = (now, endpoints)
    return endpoints


def discovery_forget() -> None:
    """Forget every document read (tests; a provider that moved its endpoints)."""
    with _lock:
        _documents.clear()


def _fetch(issuer: str) -> dict[str, str]:
    url = issuer.rstrip("/") + DISCOVERY_PATH
    try:
        response = requests.get(url, timeout=settings.OIDC_TIMEOUT)
        response.raise_for_status()
        document = response.json()
    except requests.RequestException as exc:
        raise SsoUnavailable(
            f"could not read the provider's discovery document {url}: {exc}"
        ) from exc
    except ValueError:
        raise SsoUnavailable(f"the provider's discovery document {url} is not JSON") from None
    if not isinstance(document, dict):
        raise SsoUnavailable(f"the provider's discovery document {url} is not a JSON object")
    named = str(document.get("issuer", ""))
    if named.rstrip("/") != issuer.rstrip("/"):
        # OpenID Connect Discovery 1.0, 4.3: the document must name the issuer it was
        # read from, or its keys and tokens are someone else's.
        raise SsoUnavailable(
            f"the discovery document {url} names the issuer {named!r}, not SF_OIDC_ISSUER "
            f"{issuer!r}"
        )
    endpoints: dict[str, str] = {}
    for field in ENDPOINTS.values():
        value = document.get(field)
        if not isinstance(value, str) or not value:
            raise SsoUnavailable(f"the discovery document {url} has no {field}")
        problem = http_url_problem(value)
        if problem:
            raise SsoUnavailable(f"the discovery document {url}: {field} is not {problem}")
        endpoints[field] = str(value)
    return endpoints
