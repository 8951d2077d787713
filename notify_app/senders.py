"""The three channels: email (Django's backend), a signed webhook, the browser.

Each sender raises on failure; the caller (``notify_app.delivery``) records the error
and schedules the retry. None of them runs inside a transaction.

The webhook signature (documented for receivers in docs/notifications.md)
-------------------------------------------------------------------------
Like Slack's request signing: with ``ts`` the Unix time of sending (seconds) and
``body`` the exact bytes posted,

    X-SF-Request-Timestamp: <ts>
    X-SF-Signature: v0=<hex HMAC-SHA256(secret, "v0:" + ts + ":" + body)>

A receiver recomputes the HMAC over the raw body with its copy of the secret,
compares in constant time, and refuses a timestamp more than five minutes old (a
replay). ``signature_verify`` is that check, for tests and for Python receivers.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import time
import urllib.parse
from typing import Any

import httpx
from django.conf import settings
from django.core.mail import send_mail

from notify_app.models import Channel, Delivery, Notification
from notify_app.recipients import preference_of
from sf_core.live import Groups, broadcast
from sf_core.netguard import AddressRefused, guarded_client

SIGNATURE_VERSION = "v0"
SIGNATURE_HEADER = "X-SF-Signature"
TIMESTAMP_HEADER = "X-SF-Request-Timestamp"
MAX_SKEW_SECONDS = 300
logger = logging.getLogger("sf.notify")


class DeliveryError(Exception):
    """A channel refused or could not be reached; worth another try later."""


def signature(secret: str, timestamp: str, body: bytes) -> str:
    base = f"{SIGNATURE_VERSION}:{timestamp}:".encode() + body
    digest = hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()
    return f"{SIGNATURE_VERSION}={digest}"


def signature_verify(
    secret: str, *, timestamp: str, body: bytes, signed: str, now: float | None = None
) -> bool:
    """True when ``signed`` is the signature of ``body`` at a fresh ``timestamp``."""
    try:
        age = abs((time.time() if now is None else now) - int(timestamp))
    except ValueError:
        return False
    if age > MAX_SKEW_SECONDS:
        return False
    return hmac.compare_digest(signature(secret, timestamp, body), signed)


def slack_message(notification: Notification) -> dict[str, Any]:
    """Slack-compatible JSON: ``text`` for any client, ``blocks`` for a richer one."""
    link = _absolute(notification.url)
    text = f"*{notification.title}*\n{notification.text}"
    if link:
        text += f"\n<{link}|Open in SF>"
    return {
        "text": text,
        "blocks": [
            {"type": "header", "text": {"type": "plain_text", "text": notification.title}},
            {"type": "section", "text": {"type": "mrkdwn", "text": notification.text}},
            *(
                [{"type": "context", "elements": [{"type": "mrkdwn", "text": f"<{link}|Open>"}]}]
                if link
                else []
            ),
        ],
        "sf": {"kind": notification.kind, "id": notification.pk, **notification.payload},
    }


def delivery_send(delivery: Delivery) -> None:
    """Send one delivery over its channel, or raise."""
    notification = delivery.notification
    if delivery.channel == Channel.EMAIL:
        _email(delivery, notification)
    elif delivery.channel == Channel.WEBHOOK:
        _webhook(delivery, notification)
    elif delivery.channel == Channel.BROWSER:
        broadcast(
            Groups.user(delivery.user_id),
            "notification.new",
            title=notification.title,
            text=notification.text,
            url=notification.url,
            kind=notification.kind,
            id=notification.pk,
        )
    else:
        raise DeliveryError(f"unknown channel {delivery.channel!r}")


def _email(delivery: Delivery, notification: Notification) -> None:
    address = delivery.user.email
    if not address:
        raise DeliveryError("the account has no email address")
    link = _absolute(notification.url)
    body = notification.text + (f"\n\n{link}" if link else "")
    send_mail(notification.title, body, None, [address], fail_silently=False)


def _webhook(delivery: Delivery, notification: Notification) -> None:
    preference = preference_of(delivery.user)
    if not preference.webhook_url:
        raise DeliveryError("no webhook URL in the preferences")
    body = json.dumps(slack_message(notification)).encode()
    timestamp = str(int(time.time()))
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "SF-notifications",
        TIMESTAMP_HEADER: timestamp,
        SIGNATURE_HEADER: signature(preference.webhook_secret, timestamp, body),
    }
    timeout = settings.SF_NOTIFY_WEBHOOK_TIMEOUT.total_seconds()
    url = preference.webhook_url  # http(s) only: a URLField
    try:
        # The guard resolves the host once and connects to the address it checked;
        # a redirect is never followed (posted where its owner said).
        with guarded_client(timeout=timeout) as client:
            status = client.post(url, content=body, headers=headers).status_code
    except (httpx.HTTPError, httpx.InvalidURL, AddressRefused, ValueError) as error:
        # One text for a refused address and an unreachable one: the deliveries list
        # must not tell which addresses of the server's network answer.
        host = urllib.parse.urlsplit(url).hostname or url
        logger.info("webhook to %s not delivered: %s", host, error)
        raise DeliveryError(
            f"webhook: {host} could not be reached (or is not a public address)"
        ) from None
    if not 200 <= status < 300:
        raise DeliveryError(f"webhook answered {status}")


def _absolute(url: str) -> str:
    base = settings.SF_PUBLIC_URL.rstrip("/")
    if not url or url.startswith(("http://", "https://")):
        return url
    return f"{base}{url}" if base else ""
