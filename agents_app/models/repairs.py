"""The doctor's audit: one row per deterministic repair it applied (docs/doctor.md)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from agents_app.models.sessions import AgentSession
from sf_core.actors import ActorKind


class RepairRecord(models.Model):
    """What ``sf doctor --fix`` (or repair mode, or the page's Fix) changed, and who
    asked: evidence, read-only in the admin. A repair that moves a task or a session
    also writes that row's own transition."""

    check_id = models.CharField(max_length=64)
    target = models.CharField(max_length=1000)
    action = models.CharField(max_length=1000)
    session = models.ForeignKey(
        AgentSession,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="repairs",
        help_text="the session in repair mode that ran it, if any",
    )
    actor_kind = models.CharField(max_length=8, choices=ActorKind.choices)
    actor_user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    actor_label = models.CharField(max_length=150, blank=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [
            models.CheckConstraint(
                condition=Q(actor_kind__in=ActorKind.values), name="repair_actor_kind_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.check_id}: {self.action}"
