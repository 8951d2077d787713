"""API tokens (stored hashed, shown once) and the idempotency keys of creating calls."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class ApiToken(models.Model):
    """A person's bearer token. Only the sha256 of the secret is kept; ``prefix`` (the
    first characters) lets the profile page tell tokens apart. With ``projects`` set,
    the token sees only those projects, and within them only what the person may."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100)
    token_hash = models.CharField(max_length=64, unique=True)
    prefix = models.CharField(max_length=16)
    projects = models.ManyToManyField("agents_app.Project", blank=True, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @property
    def active(self) -> bool:
        return self.revoked_at is None


class IdempotencyRecord(models.Model):
    """The first answer to a creating call sent with an ``Idempotency-Key``: a repeat by
    the same person with the same key gets it again; another body under the key, 409."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=200)
    route = models.CharField(max_length=300)  # method and path: a key is per call
    request_hash = models.CharField(max_length=64)
    status_code = models.PositiveSmallIntegerField()
    response = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "key"], name="api_idempotency_user_key")
        ]

    def __str__(self) -> str:
        return f"{self.key} ({self.route})"
