"""How people log in: the password form, single sign-on, or both (docs/sso.md).

Read by ``sf_web.settings`` (``from sf_web.settings_auth import *``): every name in
upper case here is a Django setting.

Single sign-on is OpenID Connect's authorization-code flow through mozilla-django-oidc
(sf_web/sso.py): it is on once ``SF_OIDC_CLIENT_ID`` is set, and then needs
``SF_OIDC_ISSUER``. The provider's endpoints are read from its discovery document
(``<issuer>/.well-known/openid-configuration``) when they are not set one by one.
``SF_LOCAL_LOGIN=0`` turns the password form off (the admin's too): it is refused
unless single sign-on is configured, which would leave no way in.
"""

from __future__ import annotations

from datetime import timedelta

from django.core.exceptions import ImproperlyConfigured

from sf_core.env import Env

_env = Env()

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "dashboard"
LOGOUT_REDIRECT_URL = "login"

# --- single sign-on (OpenID Connect) ----------------------------------------------------

SF_OIDC_CLIENT_ID = _env.string("SF_OIDC_CLIENT_ID")
SF_SSO_ENABLED = bool(SF_OIDC_CLIENT_ID)
SF_OIDC_ISSUER = _env.http_url("SF_OIDC_ISSUER") or ""
if SF_SSO_ENABLED and not SF_OIDC_ISSUER:
    raise ImproperlyConfigured(
        "SF_OIDC_ISSUER: required when SF_OIDC_CLIENT_ID is set (the provider's issuer URL, "
        "e.g. https://login.example.com/realms/team)"
    )
# What the login page's button says: "Log in with <name>".
SF_OIDC_PROVIDER_NAME = _env.string("SF_OIDC_PROVIDER_NAME", "single sign-on")
# The claim SF names a new person by, and the claim that lists their groups.
SF_OIDC_USERNAME_CLAIM = _env.string("SF_OIDC_USERNAME_CLAIM", "preferred_username")
SF_OIDC_GROUPS_CLAIM = _env.string("SF_OIDC_GROUPS_CLAIM", "groups")
# Off: only people an admin created and linked (admin, SSO identities) may log in.
OIDC_CREATE_USER = _env.flag("SF_OIDC_CREATE_USERS", True)
OIDC_RP_CLIENT_ID = SF_OIDC_CLIENT_ID
OIDC_RP_CLIENT_SECRET = _env.string("SF_OIDC_CLIENT_SECRET")
OIDC_RP_SCOPES = _env.string("SF_OIDC_SCOPES", "openid email profile")
if "openid" not in OIDC_RP_SCOPES.split():
    raise ImproperlyConfigured(
        f"SF_OIDC_SCOPES: {OIDC_RP_SCOPES!r} lacks 'openid' (e.g. 'openid email profile groups')"
    )
# mozilla-django-oidc checks RS* and ES* signatures with the provider's public keys (a
# key set read from the JWKS endpoint); HS* would need the client secret as the key.
OIDC_RP_SIGN_ALGO = _env.choice(
    "SF_OIDC_SIGN_ALGO", "RS256", ("RS256", "RS384", "RS512", "ES256", "ES384", "ES512")
)
# "" is read from the discovery document (sf_web/sso_discovery.py).
OIDC_OP_AUTHORIZATION_ENDPOINT = _env.http_url("SF_OIDC_AUTHORIZATION_ENDPOINT") or ""
OIDC_OP_TOKEN_ENDPOINT = _env.http_url("SF_OIDC_TOKEN_ENDPOINT") or ""
OIDC_OP_USER_ENDPOINT = _env.http_url("SF_OIDC_USERINFO_ENDPOINT") or ""
OIDC_OP_JWKS_ENDPOINT = _env.http_url("SF_OIDC_JWKS_ENDPOINT") or ""
OIDC_TIMEOUT = _env.duration(
    "SF_OIDC_TIMEOUT", timedelta(seconds=10), minimum=timedelta(milliseconds=100)
).total_seconds()
# Proof key for code exchange as well as state and nonce: a stolen code is useless.
OIDC_USE_PKCE = True
OIDC_AUTHENTICATION_CALLBACK_URL = "sso-callback"

SF_LOCAL_LOGIN = _env.flag("SF_LOCAL_LOGIN", True)
if not SF_LOCAL_LOGIN and not SF_SSO_ENABLED:
    raise ImproperlyConfigured(
        "SF_LOCAL_LOGIN=0 turns the password form off, but single sign-on is not "
        "configured (SF_OIDC_CLIENT_ID, SF_OIDC_ISSUER): nobody could log in"
    )

# --- the password form ----------------------------------------------------------------

# django-axes counts failed logins (the login form, the admin's) per username and
# client address together: after SF_LOGIN_FAILURE_LIMIT failures even the right
# password is refused until SF_LOGIN_COOLOFF has passed (or an admin runs
# ``manage.py axes_reset_username NAME``). The pair, not the address alone, so that
# colleagues behind one NAT do not lock each other out, and not the username alone, so
# that a stranger cannot lock the admin out from elsewhere. Without local login no
# password is checked at all (not even the admin's); single sign-on's backend only
# answers its own callback.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    *(["django.contrib.auth.backends.ModelBackend"] if SF_LOCAL_LOGIN else []),
    *(["sf_web.sso.SsoBackend"] if SF_SSO_ENABLED else []),
]
AXES_FAILURE_LIMIT = _env.integer("SF_LOGIN_FAILURE_LIMIT", 5, minimum=1, maximum=1000)
AXES_COOLOFF_TIME = _env.duration(
    "SF_LOGIN_COOLOFF", timedelta(minutes=15), minimum=timedelta(seconds=1)
)
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "sf_web.errors.login_locked_out"
# The records of every login (django-axes' access log) are not kept: failures are.
AXES_DISABLE_ACCESS_LOG = True
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
