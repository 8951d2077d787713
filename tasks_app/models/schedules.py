"""Recurring schedules: a saved intent or plan template run at the times of a cron
expression in a time zone, and the record of every occurrence (docs/schedules.md).

Not to be confused with ``TaskSchedule`` (``models/runtime.py``), which is one task's
dispatch state (queued, due, claimed, …). Here a ``Schedule`` is a person's standing
order ("every night at 02:30 Berlin time, plan this intent") and a ``ScheduleRun`` is
what became of one of its occurrences: started, skipped, missed, refused or failed.

Times: the cron expression is wall-clock time in ``timezone`` (an IANA name), resolved
to an instant only when due; every stored instant is UTC (DESIGN §11).
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.timezone import now as utc_now

from agents_app.axes import ModelMode, PermissionProfile, RunControl
from agents_app.models import AgentSession, Project
from tasks_app.models.plan import Plan
from tasks_app.models.request import PlanRequest


def _in(field: str, choices: type[models.TextChoices]) -> Q:
    return Q(**{f"{field}__in": choices.values})


class ScheduleKind(models.TextChoices):
    INTENT = "intent"  # a saved intent: a new session plans it
    PLAN = "plan"  # a plan template: a plan file's text, imported as it is


class ScheduleOwner(models.TextChoices):
    """Who a schedule's runs act as: a person (checked at every run) or SF itself (a
    schedule made at the server's shell without ``--as``)."""

    PERSON = "person"
    SYSTEM = "system"


class ScheduleRunTrigger(models.TextChoices):
    SCHEDULED = "scheduled"  # an occurrence of the cron expression
    MANUAL = "manual"  # Run now


class ScheduleRunStatus(models.TextChoices):
    """What became of one occurrence. The first three started a session."""

    PENDING = "pending"  # claimed by a sweep, not yet started (a crash leaves it for the next)
    PLANNING = "planning"  # started: the session is planning the intent
    PROPOSED = "proposed"  # started: the plan waits for a person (manual run control)
    STARTED = "started"  # started: the plan was accepted by the schedule and runs
    SKIPPED = "skipped"  # not started: the previous run was still going (no overlap)
    MISSED = "missed"  # not started: SF was not running and the catch-up window had passed
    REFUSED = "refused"  # not started: the schedule's person may no longer do this
    FAILED = "failed"  # started, but planning or the import failed (the reason says why)


# A run whose session may still be doing the schedule's work (see selectors).
STARTED_RUN_STATUSES = (
    ScheduleRunStatus.PLANNING,
    ScheduleRunStatus.PROPOSED,
    ScheduleRunStatus.STARTED,
)
DEFAULT_CATCH_UP = timedelta(hours=1)


class Schedule(models.Model):
    """A saved intent or plan template with a cron expression and a time zone."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="schedules")
    name = models.CharField(max_length=120)
    kind = models.CharField(max_length=8, choices=ScheduleKind.choices)
    intent = models.TextField(blank=True)
    plan_text = models.TextField(blank=True)  # as `sf plan import` reads a file
    plan_format = models.CharField(max_length=8, default="yaml")  # yaml, json or md
    cron = models.CharField(max_length=120)  # five fields, wall-clock time in `timezone`
    timezone = models.CharField(max_length=64)  # IANA name, e.g. Europe/Berlin
    run_control = models.CharField(
        max_length=16, choices=RunControl.choices, default=RunControl.MANUAL
    )
    permission_profile = models.CharField(
        max_length=16, choices=PermissionProfile.choices, default=PermissionProfile.NORMAL
    )
    model_mode = models.CharField(max_length=16, choices=ModelMode.choices, default=ModelMode.DEEP)
    # The missed-run policy: of the occurrences due while SF was down, only the latest
    # may still start, and only this late; every other one is recorded as missed.
    catch_up_window = models.DurationField(default=DEFAULT_CATCH_UP)
    owner = models.CharField(
        max_length=8, choices=ScheduleOwner.choices, default=ScheduleOwner.PERSON
    )
    run_as = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    paused = models.BooleanField(default=False)
    # The next occurrence not yet claimed (UTC). Sweeps claim by a conditional update of
    # this field, so one occurrence is claimed once however many workers sweep.
    next_run_at = models.DateTimeField()
    created_at = models.DateTimeField(default=utc_now)
    updated_at = models.DateTimeField(default=utc_now)

    class Meta:
        verbose_name = "recurring schedule"
        ordering = ["project_id", "name"]
        indexes = [models.Index(fields=["paused", "next_run_at"], name="recurring_schedule_due")]
        constraints = [
            models.UniqueConstraint(fields=["project", "name"], name="recurring_schedule_name"),
            models.CheckConstraint(condition=_in("kind", ScheduleKind), name="schedule_kind_ok"),
            models.CheckConstraint(
                condition=_in("run_control", RunControl), name="schedule_run_control_ok"
            ),
            models.CheckConstraint(
                condition=_in("permission_profile", PermissionProfile),
                name="schedule_permission_profile_ok",
            ),
            models.CheckConstraint(
                condition=_in("model_mode", ModelMode), name="schedule_model_mode_ok"
            ),
            models.CheckConstraint(condition=_in("owner", ScheduleOwner), name="schedule_owner_ok"),
            models.CheckConstraint(
                condition=~Q(owner=ScheduleOwner.SYSTEM) | Q(run_as__isnull=True),
                name="schedule_system_owner_has_no_person",
            ),
            models.CheckConstraint(
                condition=(Q(kind=ScheduleKind.INTENT) & ~Q(intent=""))
                | (Q(kind=ScheduleKind.PLAN) & ~Q(plan_text="")),
                name="schedule_has_its_content",
            ),
            models.CheckConstraint(
                condition=Q(catch_up_window__gt=timedelta(0)), name="schedule_catch_up_positive"
            ),
        ]

    def __str__(self) -> str:
        return self.name


class ScheduleRun(models.Model):
    """One occurrence of a schedule and what became of it: a row a person can see for
    every run, skip and miss. Unique per (schedule, occurrence): two sweeps can never
    record, let alone start, one occurrence twice."""

    schedule = models.ForeignKey(Schedule, on_delete=models.CASCADE, related_name="runs")
    occurrence = models.DateTimeField()  # when it was due (UTC); Run now: the click
    # A miss may stand for several occurrences in a row (a long outage of a frequent
    # schedule): `occurrences` of them, the first at `occurrence`, the last at `last_occurrence`.
    occurrences = models.PositiveIntegerField(default=1)
    last_occurrence = models.DateTimeField()
    trigger = models.CharField(
        max_length=10, choices=ScheduleRunTrigger.choices, default=ScheduleRunTrigger.SCHEDULED
    )
    status = models.CharField(max_length=10, choices=ScheduleRunStatus.choices)
    reason = models.TextField(blank=True)  # for people; control flow reads `status`
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    session = models.ForeignKey(
        AgentSession, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    plan_request = models.ForeignKey(
        PlanRequest, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    plan = models.ForeignKey(
        Plan, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=utc_now)
    started_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = "recurring schedule run"
        ordering = ["-occurrence", "-pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["schedule", "occurrence"], name="recurring_schedule_run_once"
            ),
            models.CheckConstraint(
                condition=_in("status", ScheduleRunStatus), name="schedule_run_status_ok"
            ),
            models.CheckConstraint(
                condition=_in("trigger", ScheduleRunTrigger), name="schedule_run_trigger_ok"
            ),
            models.CheckConstraint(
                condition=Q(occurrences__gte=1) & Q(last_occurrence__gte=models.F("occurrence")),
                name="schedule_run_occurrences_ok",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.schedule_id} @ {self.occurrence:%Y-%m-%d %H:%M} UTC: {self.status}"
