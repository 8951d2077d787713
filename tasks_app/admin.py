"""Admin: plans, tasks (with their read-only transition log, units and merge-queue
entries), units, workers, recurring schedules with their read-only runs, and the issues
taken from the projects' forges (read-only)."""

from __future__ import annotations

from django.contrib import admin
from django.db import models
from django.http import HttpRequest

from agents_app.admin_scope import ProjectScopedAdmin, ReadOnlyAdminMixin
from tasks_app.models import (
    ForgeIssue,
    MergeRequest,
    Plan,
    Schedule,
    ScheduleRun,
    Task,
    TaskTransition,
    Unit,
    Worker,
)


class ReadOnlyInline(ReadOnlyAdminMixin, admin.TabularInline):
    extra = 0
    can_delete = False


class TaskInline(ReadOnlyInline):
    model = Task
    fields = ("position", "key", "title", "status", "risk_level", "mutation_scope", "retry_count")
    readonly_fields = fields


class TransitionInline(ReadOnlyInline):
    model = TaskTransition
    fields = ("created_at", "from_status", "to_status", "actor_label", "reason")
    readonly_fields = fields


class MergeRequestInline(ReadOnlyInline):
    """The task's turns in the merge queue: evidence, never edited."""

    model = MergeRequest
    fields = ("created_at", "status", "base_branch", "attempts", "merge_commit", "reason", "output")
    readonly_fields = fields


class UnitInline(ReadOnlyInline):
    model = Unit
    fields = (
        "attempt",
        "status",
        "model",
        "tokens_in",
        "tokens_out",
        "cost",
        "verification_passed",
    )
    readonly_fields = fields


@admin.register(Plan)
class PlanAdmin(ProjectScopedAdmin):
    project_lookup = "session__project"
    list_display = ("pk", "session", "status", "source", "summary", "accepted_at", "created_at")
    list_filter = ("status", "source")
    search_fields = ("summary", "intent")
    # Plans move (proposed, accepted, rejected) only through tasks_app.services.
    readonly_fields = (
        "status",
        "status_reason",
        "accepted_at",
        "accepted_by",
        "accepted_run_control",
        "accepted_permission_profile",
    )
    inlines = (TaskInline,)


@admin.register(Task)
class TaskAdmin(ProjectScopedAdmin):
    project_lookup = "plan__session__project"
    list_display = ("key", "title", "plan", "status", "risk_level", "retry_count", "cost_spent")
    list_filter = ("status", "hold_reason", "risk_level", "mutation_scope", "task_kind")
    search_fields = ("key", "title")
    # The lifecycle moves only through tasks_app.lifecycle, so every move is logged.
    readonly_fields = (
        "status",
        "status_reason",
        "hold_reason",
        "retry_count",
        "cost_spent",
        "started_at",
        "completed_at",
        "checkpoint_ref",
    )
    inlines = (TransitionInline, UnitInline, MergeRequestInline)


@admin.register(Worker)
class WorkerAdmin(admin.ModelAdmin):
    list_display = (
        "hostname",
        "pid",
        "concurrency",
        "queues",
        "started_at",
        "last_heartbeat_at",
        "stopped_at",
    )


class ScheduleRunInline(ReadOnlyInline):
    """What became of each occurrence: evidence, never edited."""

    model = ScheduleRun
    fields = ("occurrence", "occurrences", "trigger", "status", "reason", "session", "plan")
    readonly_fields = fields
    ordering = ("-occurrence",)


@admin.register(Schedule)
class ScheduleAdmin(ProjectScopedAdmin):
    """Recurring schedules (not a task's dispatch state: that is TaskSchedule). Changed
    through the schedules page, CLI or API, whose services check the roles of what a
    schedule runs; here they are read, and their runs are read-only."""

    list_display = ("name", "project", "cron", "timezone", "kind", "run_control", "paused")
    list_filter = ("paused", "kind", "run_control", "permission_profile")
    search_fields = ("name", "intent")
    readonly_fields = tuple(
        field.name
        for field in Schedule._meta.get_fields()
        if field.concrete and not field.many_to_many
    )
    inlines = (ScheduleRunInline,)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


@admin.register(ScheduleRun)
class ScheduleRunAdmin(ReadOnlyAdminMixin, ProjectScopedAdmin):
    project_lookup = "schedule__project"
    list_display = ("schedule", "occurrence", "trigger", "status", "session", "reason")
    list_filter = ("status", "trigger")
    search_fields = ("schedule__name", "reason")


@admin.register(ForgeIssue)
class ForgeIssueAdmin(ReadOnlyAdminMixin, ProjectScopedAdmin):
    """The issues SF took from the projects' forges (docs/forge.md): evidence."""

    list_display = ("project", "kind", "number", "title", "author", "state", "session", "reason")
    # Django 6 assumes https for a URL without a scheme; say so now (it warns otherwise).
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}
    list_filter = ("state", "kind")
    search_fields = ("title", "author", "url")
