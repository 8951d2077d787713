"""A model's review of a unit's verified work, before a person's (docs/model-review.md)."""

from __future__ import annotations

from decimal import Decimal

from django.db import models
from django.db.models import Q
from django.utils import timezone

from tasks_app.models.runtime import Unit


class ReviewVerdict(models.TextChoices):
    PENDING = "pending"  # the review runs
    APPROVE = "approve"
    REQUEST_CHANGES = "request_changes"
    NO_VERDICT = "no_verdict"  # no usable verdict (garbage, a timeout, an error): advisory


class ReviewMode(models.TextChoices):
    ADVISORY = "advisory"  # shown; a person decides
    REQUIRED = "required"  # request_changes sends the task back for another attempt


class ModelReview(models.Model):
    """One model review of ``unit``'s changes: its verdict with reasons, what the
    project's policy made of it, and what it cost (also charged to the unit, its task
    and session). Its line comments are ``DiffComment`` rows of the unit, ``by_model``."""

    unit = models.OneToOneField(Unit, on_delete=models.CASCADE, related_name="model_review")
    mode = models.CharField(max_length=8, choices=ReviewMode.choices)
    verdict = models.CharField(
        max_length=16, choices=ReviewVerdict.choices, default=ReviewVerdict.PENDING
    )
    reasons = models.TextField(blank=True)  # the model's, redacted
    # SF's words: why there is no verdict, comments dropped, whether the verdict acted.
    notes = models.JSONField(default=list, blank=True)
    sent_back = models.BooleanField(default=False)  # required: the task went back to todo
    model = models.CharField(max_length=200, blank=True)
    tokens_in = models.PositiveIntegerField(default=0)
    tokens_out = models.PositiveIntegerField(default=0)
    cost = models.DecimalField(max_digits=12, decimal_places=6, default=Decimal("0"))
    started_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(verdict__in=ReviewVerdict.values), name="model_review_verdict_valid"
            ),
            models.CheckConstraint(
                condition=Q(mode__in=ReviewMode.values), name="model_review_mode_valid"
            ),
            # Only a verdict that asked for changes sends a task back.
            models.CheckConstraint(
                condition=Q(sent_back=False) | Q(verdict="request_changes", mode="required"),
                name="model_review_sent_back_by_request",
            ),
        ]

    def __str__(self) -> str:
        return f"model review of unit {self.unit_id}: {self.verdict}"
