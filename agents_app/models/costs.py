"""The cost ledger: one row per model call that completed, wherever it was made.

Unit steps and the planner's calls both write here (``TraceRecorder.model_call``), so
every dollar a session spent is a row: roll-ups by project, session, task, model, user
and day are sums over this table. ``priced`` is False when neither litellm nor the
project knew the model's price: the call was charged 0 and the session says so.
"""

from __future__ import annotations

from decimal import Decimal

from django.db import models
from django.db.models import Q
from django.utils import timezone

from agents_app.models.sessions import AgentSession
from agents_app.models.trace import TraceEvent


class CallStage(models.TextChoices):
    UNIT = "unit"  # a step of a unit's agent loop
    PLAN = "plan"  # the planner, turning an intent into a plan


class ModelCall(models.Model):
    session = models.ForeignKey(AgentSession, on_delete=models.CASCADE, related_name="calls")
    # The unit that made the call, by id, like ``TraceEvent.unit_id`` (relation above).
    unit_id = models.BigIntegerField(null=True, blank=True, db_index=True)
    trace_event = models.OneToOneField(
        TraceEvent, null=True, blank=True, on_delete=models.SET_NULL, related_name="call"
    )
    stage = models.CharField(max_length=8, choices=CallStage.choices)
    model = models.CharField(max_length=200)
    tokens_in = models.PositiveIntegerField(default=0)
    tokens_out = models.PositiveIntegerField(default=0)
    cost = models.DecimalField(max_digits=12, decimal_places=6, default=Decimal("0"))
    priced = models.BooleanField(default=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [
            models.Index(fields=["session", "created_at"], name="call_session_time"),
            models.Index(fields=["created_at"], name="call_time"),
            models.Index(fields=["model"], name="call_model"),
        ]
        constraints = [
            models.CheckConstraint(
                condition=Q(stage__in=CallStage.values), name="call_stage_valid"
            ),
            models.CheckConstraint(condition=Q(cost__gte=0), name="call_cost_non_negative"),
            models.CheckConstraint(
                condition=Q(stage=CallStage.PLAN, unit_id__isnull=True) | Q(stage=CallStage.UNIT),
                name="call_plan_has_no_unit",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.session_id} {self.stage} {self.model} ${self.cost}"
