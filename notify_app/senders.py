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
import ipaddress
import json
import socket
import time
import urllib.parse
import urllib.request
from typing import Any

from django.conf import settings
from django.core.mail import send_mail

from notify_app.models import Channel, Delivery, Notification
from notify_app.recipients import preference_of
from sf_core.live import Groups, broadcast

SIGNATURE_VERSION = "v0"
SIGNATURE_HEADER = "X-SF-Signature"
TIMESTAMP_HEADER = "X-SF-Request-Timestamp"
MAX_SKEW_SECONDS = 300


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
    request = urllib.request.Request(  # http(s) only: a URLField
        preference.webhook_url,
        data=body,
        method="POST",
        headers={
            "Content-Type": "application/json",
            "User-Agent": "SF-notifications",
            TIMESTAMP_HEADER: timestamp,
            SIGNATURE_HEADER: signature(preference.webhook_secret, timestamp, body),
        },
    )
    webhook_host_check(preference.webhook_url)
    timeout = settings.SF_NOTIFY_WEBHOOK_TIMEOUT.total_seconds()
    try:
        with _OPENER.open(request, timeout=timeout) as response:
            status = response.status
    except OSError as error:  # HTTPError (4xx/5xx and refused redirects), URLError, timeouts
        raise DeliveryError(f"webhook: {error}") from error
    if not 200 <= status < 300:
        raise DeliveryError(f"webhook answered {status}")


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """A webhook is posted where its owner said, never where a redirect points."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


_OPENER = urllib.request.build_opener(_NoRedirect)


def webhook_host_check(url: str) -> None:
    """Refuse a webhook whose host resolves to a loopback, private, link-local or
    reserved address (a person could otherwise make the server post to its own
    network), unless ``SF_NOTIFY_WEBHOOK_PRIVATE`` allows it (on outside production)."""
    if settings.SF_NOTIFY_WEBHOOK_PRIVATE:
        return
    host = urllib.parse.urlsplit(url).hostname or ""
    try:
        addresses = {info[4][0] for info in socket.getaddrinfo(host, None)}
    except OSError as error:
        raise DeliveryError(f"webhook host {host!r} does not resolve: {error}") from error
    for address in addresses:
        ip = ipaddress.ip_address(str(address).split("%")[0])
        if not ip.is_global:
            raise DeliveryError(f"webhook host {host!r} is a non-public address ({ip})")


def _absolute(url: str) -> str:
    base = settings.SF_PUBLIC_URL.rstrip("/")
    if not url or url.startswith(("http://", "https://")):
        return url
    return f"{base}{url}" if base else ""
