"""Scheduler state, ephemeral runtime state and units: each separate from the lifecycle."""

from __future__ import annotations

from decimal import Decimal

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone

from tasks_app.models.plan import Task


def _in(field: str, choices: type[models.TextChoices]) -> Q:
    return Q(**{f"{field}__in": choices.values})


class ScheduleStatus(models.TextChoices):
    QUEUED = "queued"  # accepted, waiting for its blockers
    DUE = "due"  # ready to be claimed by a worker
    CLAIMED = "claimed"  # a worker owns the next unit
    DISPATCHED = "dispatched"  # the unit is running
    CONSUMED = "consumed"  # the unit finished; the lifecycle took over
    EXPIRED = "expired"  # the claim lapsed (dead worker) or the task left the plan


class TaskSchedule(models.Model):
    """When and by whom a task's next unit runs. Not the task's lifecycle."""

    task = models.OneToOneField(Task, on_delete=models.CASCADE, related_name="schedule")
    status = models.CharField(
        max_length=12, choices=ScheduleStatus.choices, default=ScheduleStatus.QUEUED
    )
    due_at = models.DateTimeField(null=True, blank=True)
    claimed_by = models.CharField(max_length=255, blank=True)
    claimed_at = models.DateTimeField(null=True, blank=True)
    dispatched_at = models.DateTimeField(null=True, blank=True)
    consumed_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    enqueued_at = models.DateTimeField(null=True, blank=True)  # last sent to the workers

    class Meta:
        indexes = [models.Index(fields=["status", "due_at"], name="schedule_status_due")]
        constraints = [
            models.CheckConstraint(
                condition=_in("status", ScheduleStatus), name="schedule_status_valid"
            ),
            models.CheckConstraint(
                condition=~Q(status=ScheduleStatus.CLAIMED) | ~Q(claimed_by=""),
                name="schedule_claim_has_owner",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.task_id}: {self.status}"


class StopKind(models.TextChoices):
    CANCEL = "cancel"
    AFTER_STEP = "after_step"


class TaskRuntime(models.Model):
    """What is running the task right now. Ephemeral: cleared when the unit ends."""

    task = models.OneToOneField(Task, on_delete=models.CASCADE, related_name="runtime")
    worker = models.CharField(max_length=255, blank=True)
    pid = models.PositiveIntegerField(null=True, blank=True)
    worktree_path = models.CharField(max_length=1000, blank=True)
    current_model = models.CharField(max_length=200, blank=True)
    context_usage_percent = models.FloatField(null=True, blank=True)
    last_heartbeat_at = models.DateTimeField(null=True, blank=True)
    # A person's stop of this unit (``tasks_app.engine.stopping``): "cancel" cuts the
    # model's answer and ends the unit now; "after_step" ends it at its next model step.
    stop_kind = models.CharField(max_length=12, choices=StopKind.choices, blank=True)
    stop_reason = models.CharField(max_length=500, blank=True)
    stop_actor_kind = models.CharField(max_length=12, blank=True)
    stop_actor_label = models.CharField(max_length=150, blank=True)
    stop_actor_user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    stop_requested_at = models.DateTimeField(null=True, blank=True)
    # The model request in flight, for the unit page's "waiting for the model" (its
    # start and the prompt's tokens); cleared when its answer starts or ends.
    model_request_at = models.DateTimeField(null=True, blank=True)
    model_request_tokens = models.PositiveIntegerField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.task_id} on {self.worker or '-'}"


class UnitStatus(models.TextChoices):
    RUNNING = "running"
    SUCCEEDED = "succeeded"  # the agent finished and verification passed
    FAILED = "failed"  # verification failed or the agent gave up
    TIMED_OUT = "timed_out"
    BLOCKED = "blocked"  # waiting for a person (approval, ask_user)
    CRASHED = "crashed"  # its worker died; recovered by the next unit
    CANCELLED = "cancelled"


class Unit(models.Model):
    """One attempt at one task by a fresh agent session."""

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="units")
    attempt = models.PositiveSmallIntegerField()
    model = models.CharField(max_length=200, blank=True)
    status = models.CharField(max_length=12, choices=UnitStatus.choices, default=UnitStatus.RUNNING)
    tokens_in = models.PositiveIntegerField(default=0)
    tokens_out = models.PositiveIntegerField(default=0)
    cost = models.DecimalField(max_digits=12, decimal_places=6, default=Decimal("0"))
    # What this unit holds of its session's budget while it runs (0 once settled).
    cost_reserved = models.DecimalField(max_digits=12, decimal_places=6, default=Decimal("0"))
    verification_passed = models.BooleanField(null=True, blank=True)
    verification_output = models.TextField(blank=True)
    checkpoint_patch = models.TextField(blank=True)
    checkpoint_commit = models.CharField(max_length=64, blank=True)  # this unit's commit
    # Per-unit resources (docs/worktree-environment.md), e.g. {"SF_PORT": "40123"}.
    resources = models.JSONField(default=dict, blank=True)
    summary = models.TextField(blank=True)
    # Blocked on a call waiting for approval: the conversation so far and the calls from
    # that one on, for the next attempt once approved (``tasks_app.engine.resuming``).
    resume_state = models.JSONField(default=dict, blank=True)
    # Best-of-N: the round this unit is one attempt of, and its variant ({"model_mode",
    # "model", "temperature"}: what differs from the round's other attempts).
    round = models.ForeignKey(
        "tasks_app.AttemptRound",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="attempts",
    )
    variant = models.JSONField(default=dict, blank=True)
    started_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["task_id", "attempt"]
        constraints = [
            models.UniqueConstraint(fields=["task", "attempt"], name="unit_attempt_unique"),
            models.CheckConstraint(condition=_in("status", UnitStatus), name="unit_status_valid"),
        ]

    def __str__(self) -> str:
        return f"{self.task_id} attempt {self.attempt}: {self.status}"

    def get_absolute_url(self) -> str:
        # Pages of lower apps (the approvals queue) link a unit through this, so they
        # never name the tasks app's URLs themselves.
        return reverse("unit-detail", args=[self.pk])
