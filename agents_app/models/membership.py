"""Who may do what on a project: one role per member (viewer < operator < approver < admin)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from agents_app.models.sessions import Project


class Role(models.TextChoices):
    """A member's role on a project; each role may do everything the one before may."""

    VIEWER = "viewer"
    OPERATOR = "operator"
    APPROVER = "approver"
    ADMIN = "admin"


ROLE_ORDER: tuple[str, ...] = tuple(Role.values)


def role_rank(role: str | None) -> int:
    """0 for no role, then 1 (viewer) … 4 (admin)."""
    return ROLE_ORDER.index(role) + 1 if role in ROLE_ORDER else 0


class MembershipSource(models.TextChoices):
    """Who gave a role: a person (the members page, the admin) or single sign-on, whose
    memberships follow the provider's groups at each login (``agents_app.services.sso``)."""

    MANUAL = "manual"
    SSO = "sso", "single sign-on"


class ProjectMembership(models.Model):
    """One person's role on one project (``agents_app.access`` reads it)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="project_memberships"
    )
    role = models.CharField(max_length=8, choices=Role.choices)
    source = models.CharField(
        max_length=8, choices=MembershipSource.choices, default=MembershipSource.MANUAL
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["project", "user__username"]
        constraints = [
            models.UniqueConstraint(fields=["project", "user"], name="membership_unique"),
            models.CheckConstraint(condition=Q(role__in=Role.values), name="membership_role_valid"),
            models.CheckConstraint(
                condition=Q(source__in=MembershipSource.values), name="membership_source_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.user} on {self.project}: {self.role}"
