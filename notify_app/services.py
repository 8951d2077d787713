"""Writing a person's notification preferences."""

from __future__ import annotations

import secrets
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction

from notify_app.models import NotificationPreference


def preference_save(*, user: User, data: dict[str, Any]) -> NotificationPreference:
    """Store ``data`` (the form's cleaned data). A webhook gets a signing secret the
    first time it is set, shown once on the page; a new URL keeps the secret."""
    with transaction.atomic():
        preference, _ = NotificationPreference.objects.select_for_update().get_or_create(user=user)
        preference.email = data["email"]
        preference.browser = data["browser"]
        preference.webhook_url = data["webhook_url"]
        preference.kinds = list(data["kinds"])
        if preference.webhook_url and not preference.webhook_secret:
            preference.webhook_secret = secrets.token_urlsafe(32)
        preference.save()
        preference.projects.set(data["projects"])
    return preference


def preference_secret_rotate(*, user: User) -> str:
    """A new webhook signing secret (the old one stops verifying at once)."""
    secret = secrets.token_urlsafe(32)
    NotificationPreference.objects.update_or_create(user=user, defaults={"webhook_secret": secret})
    return secret
