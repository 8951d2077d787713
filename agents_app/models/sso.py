"""Single sign-on's two tables: which provider account a person is, and which provider
groups give which role on which project (docs/sso.md).

A person's memberships that single sign-on made carry ``source = sso`` on
``ProjectMembership``; only those follow the provider's groups at each login. A role
given by hand (the members page, the admin) is a person's decision and is left alone.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from agents_app.models.membership import Role
from agents_app.models.sessions import Project


class SsoGroupRole(models.Model):
    """Members of the provider's ``group`` get ``role`` on ``project`` at their next
    single sign-on login (the highest role when several of their groups name one)."""

    group = models.CharField(
        max_length=200, help_text="A value of the provider's groups claim, exactly as sent."
    )
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="sso_group_roles")
    role = models.CharField(max_length=8, choices=Role.choices)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["group", "project"]
        verbose_name = "SSO group role"
        constraints = [
            models.UniqueConstraint(fields=["group", "project"], name="sso_group_role_unique"),
            models.CheckConstraint(condition=Q(role__in=Role.values), name="sso_group_role_valid"),
            models.CheckConstraint(condition=~Q(group=""), name="sso_group_role_group_set"),
        ]

    def __str__(self) -> str:
        return f"group {self.group} → {self.role} on {self.project}"


class SsoIdentity(models.Model):
    """The provider account (issuer and subject, which never change) a person logs in
    as. A login is matched on these, never on a username or an email address that the
    provider's users may choose: an account named like a local one is refused, not
    merged into it."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="sso_identity"
    )
    issuer = models.CharField(max_length=400)
    subject = models.CharField(max_length=255)
    # The groups claim of the last login, as sent (shown in the admin; the roles follow it).
    groups = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    last_login_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["user__username"]
        verbose_name = "SSO identity"
        verbose_name_plural = "SSO identities"
        constraints = [
            models.UniqueConstraint(fields=["issuer", "subject"], name="sso_identity_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.user} as {self.subject} at {self.issuer}"
