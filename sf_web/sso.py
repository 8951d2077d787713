"""Single sign-on with OpenID Connect: mozilla-django-oidc's backend, held to SF's rules.

mozilla-django-oidc runs the authorization-code flow (state, nonce and PKCE kept in the
session; the code exchanged at the token endpoint; the userinfo endpoint read). SF
adds, here:

- the id_token is checked in full: its signature against the provider's key set (the
  JWKS endpoint), and its issuer (``SF_OIDC_ISSUER``), audience (our client id),
  expiry and nonce; the library checks only the signature and the nonce;
- the person is found by the provider account (issuer and subject), never by an email
  address, and created on their first login (``agents_app.services.sso``), with their
  project roles following the groups claim through the table an admin edits;
- every refusal is one clear line for the person (``SsoRefused``), shown on the login
  page by ``sf_web.sso_views``, never Django's bare 400 page;
- the backend answers only single sign-on's own callback: a password login or any
  other ``authenticate()`` never reaches the provider, and no setting is read (no
  discovery document fetched) until a login needs it.
"""

from __future__ import annotations

from typing import Any

import jwt
import requests
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.http import HttpRequest
from mozilla_django_oidc.auth import OIDCAuthenticationBackend

from agents_app.services.sso import SsoRefused, sso_claims_parse, sso_login
from sf_web.sso_discovery import SsoUnavailable, sso_setting

# Set on the request by the callback view: the one request this backend answers.
SSO_CALLBACK_MARK = "sf_sso_callback"
CLOCK_LEEWAY = 60  # seconds of clock difference tolerated on exp, iat and nbf


def _setting(name: str) -> property:
    return property(lambda self: sso_setting(name, None))


class SsoBackend(OIDCAuthenticationBackend):
    # mozilla-django-oidc reads these in __init__, which Django runs on every request
    # of a logged-in person (get_user): read when a login uses them instead.
    OIDC_OP_TOKEN_ENDPOINT = _setting("OIDC_OP_TOKEN_ENDPOINT")
    OIDC_OP_USER_ENDPOINT = _setting("OIDC_OP_USER_ENDPOINT")
    OIDC_OP_JWKS_ENDPOINT = _setting("OIDC_OP_JWKS_ENDPOINT")
    OIDC_RP_CLIENT_ID = _setting("OIDC_RP_CLIENT_ID")
    OIDC_RP_CLIENT_SECRET = _setting("OIDC_RP_CLIENT_SECRET")
    OIDC_RP_SIGN_ALGO = _setting("OIDC_RP_SIGN_ALGO")
    OIDC_RP_IDP_SIGN_KEY = None  # the key always comes from the provider's key set

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.UserModel = get_user_model()

    @staticmethod
    def get_settings(attr: str, *args: Any) -> Any:
        return sso_setting(attr, *args)

    def authenticate(self, request: HttpRequest | None, **kwargs: Any) -> User | None:
        if request is None or not getattr(request, SSO_CALLBACK_MARK, False):
            return None  # not single sign-on's callback: a password, an API token, …
        try:
            user: User | None = super().authenticate(request, **kwargs)
        except requests.RequestException as exc:
            raise SsoUnavailable(f"the provider did not answer as expected: {_short(exc)}") from exc
        return user

    def verify_token(self, token: str, **kwargs: Any) -> dict[str, Any]:
        """The id_token's claims once its signature, issuer, audience, times and nonce
        check out; ``SsoRefused`` names the first that does not."""
        try:
            header = jwt.get_unverified_header(token)
        except jwt.InvalidTokenError:
            raise SsoRefused("the provider's id_token is not a signed JWT") from None
        algorithm = self.OIDC_RP_SIGN_ALGO
        if header.get("alg") != algorithm:
            raise SsoRefused(
                f"the id_token is signed with {header.get('alg')!r}, not {algorithm!r} "
                "(SF_OIDC_SIGN_ALGO)"
            )
        key = self._signing_key(token, header)
        payload = _decode(token, key, algorithm, self.OIDC_RP_CLIENT_ID)
        nonce = kwargs.get("nonce")
        if sso_setting("OIDC_USE_NONCE", True) and payload.get("nonce") != nonce:
            raise SsoRefused(
                "the id_token's nonce is not the one this login sent: a replayed or "
                "substituted token; start the login again"
            )
        return payload

    def _signing_key(self, token: str, header: dict[str, Any]) -> jwt.PyJWK:
        """The provider's key that signed ``token``: the one with its key id, or the
        only signing key for its algorithm when the token names none (OpenID Connect
        Core 1.0, 10.1: a provider with one key may leave ``kid`` out)."""
        url = self.OIDC_OP_JWKS_ENDPOINT
        response = requests.get(url, timeout=sso_setting("OIDC_TIMEOUT", None))
        response.raise_for_status()
        try:
            keys = [key for key in response.json()["keys"] if _signs_with(key, header["alg"])]
        except (KeyError, TypeError, ValueError) as exc:
            raise SsoUnavailable(f"the provider's key set {url} could not be read: {exc}") from None
        kid = header.get("kid")
        matching = [key for key in keys if key.get("kid") == kid] if kid else keys
        if len(matching) != 1:
            raise SsoRefused(
                f"{len(matching)} keys in the provider's key set ({url}) match the id_token's "
                f"key id {kid!r} and algorithm {header['alg']!r}; SF needs exactly one"
            )
        try:
            return jwt.PyJWK(matching[0])
        except jwt.PyJWKError as exc:
            raise SsoUnavailable(
                f"the provider's key {kid!r} at {url} is unusable: {exc}"
            ) from None

    def get_or_create_user(
        self, access_token: str, id_token: str, payload: dict[str, Any]
    ) -> User | None:
        """The person of a verified login, created on their first; the userinfo
        endpoint's claims are added to the id_token's (groups are often only there)."""
        userinfo = self.get_userinfo(access_token, id_token, payload)
        if not isinstance(userinfo, dict):
            raise SsoUnavailable("the provider's userinfo endpoint did not answer a JSON object")
        if userinfo.get("sub") != payload.get("sub"):
            # OpenID Connect Core 1.0, 5.3.2: otherwise the answer is someone else's.
            raise SsoRefused(
                f"the userinfo endpoint answered for {userinfo.get('sub')!r}, not for the "
                f"id_token's subject {payload.get('sub')!r}"
            )
        claims = sso_claims_parse(
            {**payload, **userinfo},
            issuer=settings.SF_OIDC_ISSUER,
            username_claim=settings.SF_OIDC_USERNAME_CLAIM,
            groups_claim=settings.SF_OIDC_GROUPS_CLAIM,
        )
        return sso_login(claims=claims, create_users=settings.OIDC_CREATE_USER).user


def _signs_with(key: object, algorithm: str) -> bool:
    return (
        isinstance(key, dict)
        and key.get("use", "sig") == "sig"
        and key.get("alg", algorithm) == algorithm
    )


def _decode(token: str, key: Any, algorithm: str, client_id: str) -> dict[str, Any]:
    issuer = settings.SF_OIDC_ISSUER
    try:
        payload: dict[str, Any] = jwt.decode(
            token,
            key,
            algorithms=[algorithm],
            audience=client_id,
            issuer=issuer,
            leeway=CLOCK_LEEWAY,
            options={"require": ["iss", "sub", "aud", "exp", "iat"]},
        )
    except jwt.InvalidSignatureError:
        raise SsoRefused(
            "the id_token's signature does not match the provider's key: the token was "
            "altered or signed by someone else"
        ) from None
    except jwt.InvalidIssuerError:
        raise SsoRefused(_claim_message(token, "iss", f"not SF_OIDC_ISSUER {issuer!r}")) from None
    except jwt.InvalidAudienceError:
        raise SsoRefused(
            _claim_message(token, "aud", f"not this SF's client id {client_id!r}")
        ) from None
    except jwt.ExpiredSignatureError:
        raise SsoRefused(
            "the id_token has expired (or this machine's clock is ahead): start again"
        ) from None
    except jwt.InvalidTokenError as exc:
        raise SsoRefused(f"the id_token was refused: {exc}") from None
    return payload


def _claim_message(token: str, claim: str, expected: str) -> str:
    unverified = jwt.decode(token, options={"verify_signature": False})
    return f"the id_token's {claim} is {unverified.get(claim)!r}, {expected}"


def _short(exc: Exception, limit: int = 300) -> str:
    text = str(exc)
    return text if len(text) <= limit else text[:limit] + "…"
