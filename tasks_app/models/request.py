"""A request to plan from an intent: the row the session page shows while a worker plans.

Why a model of its own and not a ``planning`` plan status: ``plan_from_intent`` creates
the plan itself (proposed, or rejected with the model's errors), as it does for the CLI
and headless; a placeholder plan would be a second row to merge or delete, and every
reader of ``PlanStatus`` (dispatch, completion, the boards) would have to learn a status
that has no tasks. The request records the attempt: planning, then planned (pointing
at the plan) or failed with the reason.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from agents_app.models import AgentSession
from tasks_app.models.plan import Plan


class PlanRequestStatus(models.TextChoices):
    PLANNING = "planning"  # a worker is asking the model
    PLANNED = "planned"  # the plan exists (proposed, or rejected with its reason)
    FAILED = "failed"  # no plan: the model could not be asked (reason in status_reason)


class PlanRequest(models.Model):
    session = models.ForeignKey(
        AgentSession, on_delete=models.CASCADE, related_name="plan_requests"
    )
    intent = models.TextField()
    status = models.CharField(
        max_length=8, choices=PlanRequestStatus.choices, default=PlanRequestStatus.PLANNING
    )
    status_reason = models.TextField(blank=True)
    plan = models.OneToOneField(
        Plan, null=True, blank=True, on_delete=models.CASCADE, related_name="request"
    )
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)  # a worker claimed it
    # The planner's model request unanswered (``tasks_app.waiting``): when it was sent
    # and its prompt's tokens, for the session page's "waiting for the model".
    model_request_at = models.DateTimeField(null=True, blank=True)
    model_request_tokens = models.PositiveIntegerField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=PlanRequestStatus.values), name="plan_request_status_valid"
            ),
            models.CheckConstraint(
                condition=~Q(status=PlanRequestStatus.PLANNED) | Q(plan__isnull=False),
                name="plan_request_planned_has_plan",
            ),
        ]

    def __str__(self) -> str:
        return f"plan request {self.pk}: {self.status}"
