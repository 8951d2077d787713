"""Admin: skills and what happened to them, to look at, not to edit.

A ``Skill`` row and its eval cases are an index of files in the repository (sync
rewrites them from disk, so an edit here would be undone by the next unit); uses and
eval runs are records. Only a proposal's words may be edited here: its status moves
through the proposal service, which records the reviewer.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from agents_app.admin_scope import ProjectScopedAdmin
from skills_app.models import Skill, SkillEvalCase, SkillEvalRun, SkillProposal, SkillUse


class RecordAdmin(ProjectScopedAdmin):
    """Every field read-only and nothing added; deleting stays the project admin's."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        return [field.name for field in self.model._meta.fields]


class EvalCaseInline(admin.TabularInline):
    model = SkillEvalCase
    extra = 0
    can_delete = False
    fields = ("name", "valid", "problem", "has_work", "has_hidden", "has_trace")
    readonly_fields = fields

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Skill)
class SkillAdmin(RecordAdmin):
    list_display = (
        "name",
        "scope",
        "project",
        "valid",
        "side_effects",
        "permission_profile",
        "synced_at",
        "removed_at",
    )
    list_filter = ("scope", "valid", "side_effects", "permission_profile")
    search_fields = ("name", "description", "problem")
    inlines = (EvalCaseInline,)


@admin.register(SkillUse)
class SkillUseAdmin(RecordAdmin):
    project_lookup = "session__project"
    list_display = ("skill", "kind", "by_model", "user", "unit", "allowed", "created_at")
    list_filter = ("kind", "by_model", "allowed")
    search_fields = ("skill__name", "detail", "outcome")
    list_select_related = ("skill", "user", "unit")


@admin.register(SkillEvalCase)
class SkillEvalCaseAdmin(RecordAdmin):
    project_lookup = "skill__project"
    list_display = ("__str__", "valid", "has_work", "has_hidden", "has_trace")
    list_filter = ("valid",)
    search_fields = ("skill__name", "name")


@admin.register(SkillEvalRun)
class SkillEvalRunAdmin(RecordAdmin):
    project_lookup = "case__skill__project"
    list_display = ("case", "model_mode", "model", "passed", "duration_s", "cost", "created_at")
    list_filter = ("model_mode", "passed")
    search_fields = ("case__skill__name", "case__name", "model")
    list_select_related = ("case__skill",)


@admin.register(SkillProposal)
class SkillProposalAdmin(ProjectScopedAdmin):
    list_display = ("name", "project", "kind", "status", "reviewer", "created_at")
    list_filter = ("status", "kind")
    search_fields = ("name", "description")
    readonly_fields = (
        "project",
        "kind",
        "fingerprint",
        "evidence",
        "status",
        "reviewer",
        "reviewed_at",
        "task",
        "created_at",
    )

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False
