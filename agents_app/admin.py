"""Admin: projects, sessions and their (read-only) transition log."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from agents_app.models import AgentSession, ModeTransition, Project


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):
    list_display = ["name", "repo_path", "base_branch", "created_at"]
    search_fields = ["name", "repo_path"]


class ModeTransitionInline(admin.TabularInline):
    model = ModeTransition
    extra = 0
    can_delete = False
    readonly_fields = [
        "requested_at",
        "applied_at",
        "status",
        "scope",
        "actor_kind",
        "actor_label",
        "reason",
    ]
    fields = tuple(readonly_fields)
    ordering = ["-requested_at"]

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(AgentSession)
class AgentSessionAdmin(admin.ModelAdmin):
    list_display = [
        "__str__",
        "project",
        "work_mode",
        "run_control",
        "permission_profile",
        "model_mode",
        "surface",
        "paused",
        "status",
        "cost_spent",
        "cost_budget",
    ]
    list_filter = [
        "status",
        "work_mode",
        "run_control",
        "permission_profile",
        "model_mode",
        "paused",
    ]
    search_fields = ["title", "project__name"]
    # Axes change only through the services, so every change is logged.
    readonly_fields = [
        "work_mode",
        "run_control",
        "permission_profile",
        "model_mode",
        "surface",
        "paused",
        "mode_updated_at",
        "activity",
        "autonomous_continues",
        "cost_spent",
    ]
    inlines = [ModeTransitionInline]


@admin.register(ModeTransition)
class ModeTransitionAdmin(admin.ModelAdmin):
    list_display = [
        "session",
        "summary",
        "scope",
        "status",
        "actor_kind",
        "actor_label",
        "requested_at",
        "applied_at",
    ]
    list_filter = [
        "status",
        "scope",
        "actor_kind",
        "to_work_mode",
        "to_run_control",
        "to_permission_profile",
    ]
    search_fields = ["reason", "session__title", "actor_label"]
    date_hierarchy = "requested_at"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
