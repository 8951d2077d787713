"""Account services."""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction


@dataclass(frozen=True)
class AdminAccount:
    username: str
    created: bool
    password_file: Path
    # Where the password came from: "environment" (SF_ADMIN_PASSWORD), "file" (generated
    # now or earlier and kept in password_file), or "" (an existing user whose password
    # this command neither set nor knows).
    password_source: str

    def describe(self) -> str:
        """One true line for the operator: which user, and where its password is."""
        if not self.created:
            if self.password_source == "file":
                return (
                    f"admin user {self.username!r} exists; the password generated for it is "
                    f"in {self.password_file} (unless it was changed since)"
                )
            return f"admin user {self.username!r} exists; its password was left unchanged"
        if self.password_source == "environment":
            return f"admin user {self.username!r} created; password from SF_ADMIN_PASSWORD"
        return f"admin user {self.username!r} created; password in {self.password_file}"


def admin_ensure(*, username: str, password_file: str | None = None) -> AdminAccount:
    """Make sure a superuser exists, for a first login on a fresh machine.

    The password comes from ``SF_ADMIN_PASSWORD`` or is generated once and kept in a
    file only its owner can read; an existing user's password is never changed.
    """
    path = Path(password_file) if password_file else settings.SF_DATA_DIR / "admin-password"
    user_model = get_user_model()
    with transaction.atomic():
        if user_model.objects.filter(username=username).exists():
            source = "file" if path.is_file() else ""
            return AdminAccount(username, created=False, password_file=path, password_source=source)
        password = os.environ.get("SF_ADMIN_PASSWORD")
        source = "environment" if password else "file"
        if not password:
            password = _stored_or_new_password(path)
        user_model.objects.create_superuser(username=username, email="", password=password)
    return AdminAccount(username, created=True, password_file=path, password_source=source)


def _stored_or_new_password(path: Path) -> str:
    if path.exists():
        return path.read_text().strip()
    path.parent.mkdir(parents=True, exist_ok=True)
    password = secrets.token_urlsafe(18)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(password + "\n")
    return password
