"""System checks for what an operator can get wrong. Ids are stable: sf.E001, sf.W001, …

| id      | what                                                       |
| ------- | ---------------------------------------------------------- |
| sf.E001 | the native module ``sf_native`` cannot be imported         |
| sf.E002 | team mode, but the Redis broker does not answer            |
| sf.E003 | production profile with DEBUG on                           |
| sf.E004 | production profile with the development secret key        |
| sf.W001 | production profile on the embedded SQLite database         |
| sf.W002 | production profile without Redis: units run in the web process |
| sf.W003 | PostgreSQL configured but no Redis: no workers, no live updates across processes |
| sf.W004 | production profile with ``SF_ALLOWED_HOSTS=*``: any Host header is accepted |
| sf.E020 | the notification lease is not longer than the webhook timeout |
| sf.W005 | a configured model has no known price: its calls would cost $0 |
| sf.W006 | production profile with a single sign-on provider over plain http |
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.apps import AppConfig
from django.conf import settings
from django.core.checks import CheckMessage, Error, Tags, Warning, register
from django.db import DatabaseError

from agents_app.costs import configured_unpriced
from agents_app.models import Project
from dashboard_app.status import broker_probe, native_probe
from sf_core.errors import PolicyInvalid

SSO_ENDPOINTS = (
    "OIDC_OP_AUTHORIZATION_ENDPOINT",
    "OIDC_OP_TOKEN_ENDPOINT",
    "OIDC_OP_USER_ENDPOINT",
    "OIDC_OP_JWKS_ENDPOINT",
)
SETUP_HINT = "Run ./scripts/setup.sh (it builds native/ with maturin into the virtualenv)."


@register(Tags.compatibility)
def check_native_module(app_configs: Sequence[AppConfig] | None, **_: Any) -> list[CheckMessage]:
    probe = native_probe()
    if probe.ok:
        return []
    return [
        Error(
            f"The native module sf_native is missing: {probe.detail}", hint=SETUP_HINT, id="sf.E001"
        )
    ]


@register("sf_broker")
def check_broker(app_configs: Sequence[AppConfig] | None, **_: Any) -> list[CheckMessage]:
    if settings.REDIS_URL is None:
        return []
    probe = broker_probe()
    if probe.ok:
        return []
    return [
        Error(
            f"REDIS_URL is set but Redis does not answer: {probe.detail}",
            hint="Start Redis (scripts/setup.sh does) or fix REDIS_URL.",
            id="sf.E002",
        )
    ]


@register(Tags.security, deploy=True)
def check_production_profile(
    app_configs: Sequence[AppConfig] | None, **_: Any
) -> list[CheckMessage]:
    if not settings.PRODUCTION:
        return []
    messages: list[CheckMessage] = []
    if settings.DEBUG:
        messages.append(
            Error("SF_DEBUG is on in the production profile.", hint="Unset SF_DEBUG.", id="sf.E003")
        )
    if settings.SECRET_KEY.startswith("sf-development-only"):
        messages.append(
            Error(
                "The development secret key is in use in production.",
                hint="Set SF_SECRET_KEY to 50 or more random characters.",
                id="sf.E004",
            )
        )
    if not settings.SF_TEAM_MODE:
        messages.append(
            Warning(
                "The production profile runs on the embedded SQLite database.",
                hint="Set DATABASE_URL to a PostgreSQL database.",
                id="sf.W001",
            )
        )
    if settings.REDIS_URL is None:
        messages.append(
            Warning(
                "The production profile has no REDIS_URL: units run inside the web process.",
                hint="Set REDIS_URL and run Celery workers.",
                id="sf.W002",
            )
        )
    return messages


@register("sf_broker")
def check_team_mode_pairing(
    app_configs: Sequence[AppConfig] | None, **_: Any
) -> list[CheckMessage]:
    if settings.SF_TEAM_MODE and settings.REDIS_URL is None:
        return [
            Warning(
                "DATABASE_URL is set without REDIS_URL: no Celery workers and no live "
                "updates between processes.",
                hint="Set REDIS_URL too (team mode needs both).",
                id="sf.W003",
            )
        ]
    return []


@register(Tags.security)
def check_allowed_hosts(app_configs: Sequence[AppConfig] | None, **_: Any) -> list[CheckMessage]:
    """Not only under ``--deploy``: ``migrate`` (compose runs it at every start) says it too.

    With ``*`` Django accepts any Host header: links in e-mails and redirects can be
    made to point elsewhere, and the websocket origin check (sf_web/origins.py) can
    only compare an origin with whatever host the request claims."""
    if not settings.PRODUCTION or "*" not in settings.ALLOWED_HOSTS:
        return []
    return [
        Warning(
            "SF_ALLOWED_HOSTS is * in the production profile: any Host header is accepted.",
            hint="Set SF_ALLOWED_HOSTS to the site's host names, e.g. sf.example.com.",
            id="sf.W004",
        )
    ]


@register(Tags.security)
def check_sso_transport(app_configs: Sequence[AppConfig] | None, **_: Any) -> list[CheckMessage]:
    """Codes, tokens and the client secret cross to the provider: over https only in
    production (the endpoints read from discovery are the issuer's own)."""
    if not settings.PRODUCTION or not settings.SF_SSO_ENABLED:
        return []
    urls = [settings.SF_OIDC_ISSUER, *(getattr(settings, name) for name in SSO_ENDPOINTS)]
    plain = [url for url in urls if url.startswith("http://")]
    if not plain:
        return []
    return [
        Warning(
            f"Single sign-on talks to its provider over plain http ({', '.join(plain)}): "
            "codes, tokens and the client secret travel unencrypted.",
            hint="Use the provider's https URLs in SF_OIDC_ISSUER and SF_OIDC_*_ENDPOINT.",
            id="sf.W006",
        )
    ]


@register(Tags.compatibility)
def check_notify_lease(app_configs: Sequence[AppConfig] | None, **_: Any) -> list[CheckMessage]:
    """A lease shorter than a webhook's timeout lets the sweep claim a delivery that is
    still being sent, and send it twice (notify_app/delivery.py)."""
    if settings.SF_NOTIFY_LEASE > settings.SF_NOTIFY_WEBHOOK_TIMEOUT:
        return []
    return [
        Error(
            "SF_NOTIFY_LEASE is not longer than SF_NOTIFY_WEBHOOK_TIMEOUT.",
            hint="Raise SF_NOTIFY_LEASE (default 2m) above the webhook timeout (default 10s).",
            id="sf.E020",
        )
    ]


@register("sf_models")
def check_model_prices(app_configs: Sequence[AppConfig] | None, **_: Any) -> list[CheckMessage]:
    """Budgets and roll-ups are only as true as the prices: a self-hosted model litellm
    has no price for is charged $0 unless a project's policy names one."""
    try:
        projects = list(Project.objects.all())
    except DatabaseError:  # not migrated yet: the environment's models are still checked
        projects = []
    # A policy that does not parse here (one naming a record URL under a prefix this
    # host does not list, say) is that project's problem: named, never a worker that
    # cannot start for every other project.
    readable: list[Project] = []
    unreadable: list[CheckMessage] = []
    for project in projects:
        try:
            project.parsed_policy  # noqa: B018  (parsing is the check)
        except PolicyInvalid as exc:
            unreadable.append(
                Warning(
                    f"The policy of project {project.name} does not parse on this host: {exc}",
                    hint="Fix it in the project's settings, or give this host the same "
                    "settings as the others (SF_RECORD_URL_PREFIXES, SF_FORGE_API_HOSTS).",
                    id="sf.W016",
                )
            )
        else:
            readable.append(project)
    return unreadable + [
        Warning(
            f"The model {found.model}, configured in {found.where}, has no known price: "
            "its calls are charged $0 and budgets do not limit it.",
            hint=(
                "Name its price in the project's policy: "
                f'"prices": {{"{found.model}": {{"input_per_token": "0.000001", '
                '"output_per_token": "0.000002"}}.'
            ),
            id="sf.W005",
        )
        for found in configured_unpriced(readable)
    ]
