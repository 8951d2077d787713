"""The trace: every model step and tool call of a unit, in order, redacted."""

from __future__ import annotations

from decimal import Decimal

from django.db import models
from django.db.models import Q
from django.utils import timezone

from agents_app.models.sessions import AgentSession


class TraceKind(models.TextChoices):
    MODEL_STEP = "model_step"
    TOOL_CALL = "tool_call"
    DECISION = "decision"
    NOTE = "note"
    ERROR = "error"
    HOOK = "hook"  # a run of one of the project's hooks (docs/hooks.md)


class TraceEvent(models.Model):
    """One event of a unit's trace. ``payload`` is redacted before it is stored."""

    session = models.ForeignKey(AgentSession, on_delete=models.CASCADE, related_name="trace")
    # The unit's id, no more: units belong to the engine above this app, which holds the
    # relation (``unit``, ``Unit.trace``) and its database constraint (tasks_app.models.evidence).
    unit_id = models.BigIntegerField(null=True, blank=True, db_index=True)
    seq = models.PositiveIntegerField()
    kind = models.CharField(max_length=12, choices=TraceKind.choices)
    name = models.CharField(max_length=200, blank=True)  # tool name or model name
    payload = models.JSONField(default=dict)
    input_hash = models.CharField(max_length=64, blank=True)
    tokens_in = models.PositiveIntegerField(default=0)
    tokens_out = models.PositiveIntegerField(default=0)
    cost = models.DecimalField(max_digits=12, decimal_places=6, default=Decimal("0"))
    started_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["session_id", "unit_id", "seq"]
        constraints = [
            models.UniqueConstraint(fields=["session", "unit_id", "seq"], name="trace_seq_unique"),
            models.CheckConstraint(condition=Q(kind__in=TraceKind.values), name="trace_kind_valid"),
        ]

    def __str__(self) -> str:
        return f"{self.unit_id}#{self.seq} {self.kind} {self.name}"
