"""Risk decisions of the permission gate, their review, and the approval rules they grant."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from agents_app.axes import ModelMode, PermissionProfile, RunControl, Surface, WorkMode
from agents_app.models.sessions import AgentSession, Project


def _in(field: str, choices: type[models.TextChoices]) -> Q:
    return Q(**{f"{field}__in": choices.values})


class Decision(models.TextChoices):
    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"


class ReviewStatus(models.TextChoices):
    NOT_NEEDED = "not_needed"  # allow or deny: decided by the gate, open to audit
    PENDING = "pending"  # ask: the unit waits for a person
    APPROVED = "approved"
    REJECTED = "rejected"


class ReviewScope(models.TextChoices):
    ONCE = "once"  # this call only
    SESSION = "session"  # the same kind of call, for the rest of the session
    PROJECT = "project"  # a persistent allow rule for the project


class RiskDecision(models.Model):
    """One decision of the permission gate on one tool call, with all five axes."""

    session = models.ForeignKey(AgentSession, on_delete=models.CASCADE, related_name="decisions")
    # The unit's id, like ``TraceEvent.unit_id``; the engine above holds the relation.
    unit_id = models.BigIntegerField(null=True, blank=True, db_index=True)
    tool = models.CharField(max_length=64)
    input_normalized = models.JSONField()
    input_hash = models.CharField(max_length=64, db_index=True)
    risk_class = models.CharField(max_length=32)
    decision = models.CharField(max_length=8, choices=Decision.choices)
    rule = models.CharField(max_length=200)
    reason = models.TextField(blank=True)
    work_mode = models.CharField(max_length=16, choices=WorkMode.choices)
    run_control = models.CharField(max_length=16, choices=RunControl.choices)
    permission_profile = models.CharField(max_length=16, choices=PermissionProfile.choices)
    model_mode = models.CharField(max_length=16, choices=ModelMode.choices)
    surface = models.CharField(max_length=16, choices=Surface.choices)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    review_status = models.CharField(
        max_length=12, choices=ReviewStatus.choices, default=ReviewStatus.NOT_NEEDED
    )
    review_scope = models.CharField(max_length=8, choices=ReviewScope.choices, blank=True)
    reviewed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    reviewed_at = models.DateTimeField(null=True, blank=True)
    review_note = models.TextField(blank=True)
    used_at = models.DateTimeField(null=True, blank=True)  # a *once* approval, spent

    class Meta:
        ordering = ["-created_at", "-pk"]
        permissions = [("review_riskdecision", "Can approve or reject risk decisions")]
        indexes = [models.Index(fields=["review_status", "created_at"], name="decision_review")]
        constraints = [
            models.CheckConstraint(condition=_in("decision", Decision), name="decision_valid"),
            models.CheckConstraint(
                condition=_in("review_status", ReviewStatus), name="decision_review_status_valid"
            ),
            models.CheckConstraint(
                condition=Q(review_status=ReviewStatus.NOT_NEEDED) | Q(decision=Decision.ASK),
                name="decision_only_asks_are_reviewed",
            ),
            models.CheckConstraint(
                condition=~Q(review_status__in=[ReviewStatus.APPROVED, ReviewStatus.REJECTED])
                | Q(reviewed_at__isnull=False),
                name="decision_review_has_time",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.decision} {self.tool} ({self.rule})"


class ApprovalRule(models.Model):
    """An allow rule a reviewer granted with scope session or project."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="approval_rules")
    session = models.ForeignKey(
        AgentSession, null=True, blank=True, on_delete=models.CASCADE, related_name="approval_rules"
    )
    scope = models.CharField(max_length=8, choices=ReviewScope.choices)
    tool = models.CharField(max_length=64)
    # Never a glob: "exact" is the call as the reviewer saw it, "family" a declared
    # command family the reviewer chose (`pytest`). Rules stored before this field
    # existed get "exact": their patterns are read literally.
    match = models.CharField(
        max_length=8, choices=[("exact", "exact"), ("family", "family")], default="exact"
    )
    pattern = models.CharField(max_length=500)
    granted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    granted_from = models.ForeignKey(
        RiskDecision, null=True, blank=True, on_delete=models.SET_NULL, related_name="granted_rules"
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(scope=ReviewScope.SESSION, session__isnull=False)
                | Q(scope=ReviewScope.PROJECT, session__isnull=True),
                name="approval_rule_scope_matches",
            ),
        ]

    def __str__(self) -> str:
        shown = f"{self.pattern} …" if self.match == "family" else self.pattern
        return f"allow {self.tool} {shown} ({self.scope})"
