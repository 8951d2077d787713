"""Admin: projects, sessions and their (read-only) transition log."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from agents_app.access import sessions_visible
from agents_app.admin_scope import ProjectScopedAdmin, ReadOnlyAdminMixin, ScopedInline
from agents_app.gate.approvals import decision_review, may_review
from agents_app.models import (
    AgentSession,
    ModelCall,
    ModeTransition,
    Project,
    ProjectMembership,
    RepairRecord,
    ReviewStatus,
    RiskDecision,
    SsoGroupRole,
    SsoIdentity,
    TraceEvent,
)
from sf_core.errors import SfError


class MembershipInline(ScopedInline):
    model = ProjectMembership
    extra = 0
    fields = ["user", "role"]


@admin.register(Project)
class ProjectAdmin(ProjectScopedAdmin):
    """Registering a repository is the web form's or ``sf project create``'s work (they
    check ``SF_REPO_ROOTS`` and make the creator admin): the admin adds none, and the
    path of a registered one stays as it was checked."""

    project_lookup = ""
    list_display = ["name", "repo_path", "base_branch", "created_at"]
    search_fields = ["name", "repo_path"]
    readonly_fields = ["repo_path"]
    inlines = [MembershipInline]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


@admin.register(ProjectMembership)
class ProjectMembershipAdmin(ProjectScopedAdmin):
    list_display = ["project", "user", "role", "source", "created_at"]
    list_filter = ["role", "source"]
    frozen_on_change = ("user",)  # a role moves to someone else by remove and add
    search_fields = ["project__name", "user__username"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        # Which project a new row is for is not known before the form: superusers only
        # (project admins use the project's members page, or the project's inline).
        return request.user.is_superuser


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
class AgentSessionAdmin(ProjectScopedAdmin):
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
    frozen_on_change = ("created_by",)
    # Axes, status and the engine's bookkeeping change only through the services
    # (session_change_mode, the pause/stop/repair transitions, the budget checks), which
    # log every change; an admin form must not write past them. Title, budget and the
    # continue limit stay editable: nothing reads them as a transition.
    readonly_fields = [
        "work_mode",
        "run_control",
        "permission_profile",
        "model_mode",
        "surface",
        "paused",
        "pause_cause",
        "pause_reason",
        "status",
        "interrupt_requested",
        "step_requested",
        "driver",
        "replay_trace",
        "mode_updated_at",
        "activity",
        "autonomous_continues",
        "cost_spent",
        "cost_reserved",
        "budget_alerts",
        "finished_at",
        "provider_retry_at",
        "provider_outages",
    ]
    inlines = [ModeTransitionInline]


@admin.register(ModeTransition)
class ModeTransitionAdmin(ReadOnlyAdminMixin, ProjectScopedAdmin):
    project_lookup = "session__project"

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


def _review_action(approve: bool, scope: str, label: str) -> Any:
    def action(modeladmin: RiskDecisionAdmin, request: HttpRequest, queryset: Any) -> None:
        done = 0
        for decision in queryset.filter(review_status=ReviewStatus.PENDING):
            try:
                decision_review(
                    decision=decision,
                    reviewer=request.user,  # type: ignore[arg-type]
                    approve=approve,
                    scope=scope,
                    note=f"{label} in the admin",
                )
            except SfError as exc:
                modeladmin.message_user(request, str(exc), level="error")
                return
            done += 1
        skipped = queryset.count() - done
        note = f" ({skipped} not pending, left alone)" if skipped else ""
        modeladmin.message_user(request, f"{label}: {done} decision(s){note}")

    action.__name__ = f"{'approve' if approve else 'reject'}_{scope}"
    action.short_description = label  # type: ignore[attr-defined]
    action.allowed_permissions = ("review",)  # type: ignore[attr-defined]
    return action


@admin.register(RiskDecision)
class RiskDecisionAdmin(ProjectScopedAdmin):
    """The audit and review surface of the permission gate."""

    project_lookup = "session__project"
    list_display = [
        "created_at",
        "session",
        "tool",
        "decision",
        "rule",
        "risk_class",
        "permission_profile",
        "work_mode",
        "run_control",
        "review_status",
        "reviewed_by",
    ]
    list_filter = [
        "decision",
        "permission_profile",
        "work_mode",
        "tool",
        "review_status",
        "created_at",
    ]
    search_fields = [
        "=session__id",
        "session__title",
        "input_normalized",
        "input_hash",
        "rule",
        "tool",
    ]
    date_hierarchy = "created_at"
    actions = [
        _review_action(True, "once", "Approve once"),
        _review_action(True, "session", "Approve for the session"),
        _review_action(True, "project", "Approve for the project (persistent rule)"),
        _review_action(False, "once", "Reject"),
    ]

    def has_review_permission(self, request: HttpRequest) -> bool:
        return may_review(request.user)  # type: ignore[arg-type]  # some project's approver

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        # Decisions are evidence: every field is read-only; reviews go through actions.
        return [field.name for field in RiskDecision._meta.fields]


@admin.register(TraceEvent)
class TraceEventAdmin(ReadOnlyAdminMixin, ProjectScopedAdmin):
    project_lookup = "session__project"

    list_display = [
        "session",
        "unit",
        "seq",
        "kind",
        "name",
        "tokens_in",
        "tokens_out",
        "cost",
        "started_at",
    ]
    list_filter = ["kind"]
    search_fields = ["=session__id", "name", "input_hash"]


@admin.register(ModelCall)
class ModelCallAdmin(ReadOnlyAdminMixin, ProjectScopedAdmin):
    """The cost ledger is evidence: read-only, like the trace."""

    project_lookup = "session__project"

    list_display = [
        "session",
        "unit",
        "stage",
        "model",
        "tokens_in",
        "tokens_out",
        "cost",
        "priced",
        "created_at",
    ]
    list_filter = ["stage", "priced"]
    search_fields = ["=session__id", "model"]


@admin.register(RepairRecord)
class RepairRecordAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    """The doctor's repairs are evidence: read-only. A repair names no project (it acts
    on SF's state as often as on a project's): staff see those of sessions they may
    view; the rest (the shell's, the page's) are for superusers."""

    list_display = ["created_at", "check_id", "target", "action", "session", "actor_label"]
    list_filter = ["check_id", "actor_kind"]
    search_fields = ["target", "action", "actor_label"]
    date_hierarchy = "created_at"

    def get_queryset(self, request: HttpRequest) -> Any:
        records = super().get_queryset(request)
        if request.user.is_superuser:
            return records
        return records.filter(session__in=sessions_visible(request.user))


@admin.register(SsoGroupRole)
class SsoGroupRoleAdmin(ProjectScopedAdmin):
    """Which provider group gives which role on which project (docs/sso.md); a change
    applies to each person at their next single sign-on login."""

    list_display = ["group", "project", "role", "created_at"]
    list_filter = ["role"]
    search_fields = ["group", "project__name"]
    fields = ["group", "project", "role"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        # As for memberships: a new row's project is not known before the form.
        return request.user.is_superuser


@admin.register(SsoIdentity)
class SsoIdentityAdmin(admin.ModelAdmin):
    """Which provider account each person logs in as. A superuser links an existing
    account here (its subject, from the provider); logins create the others."""

    list_display = ["user", "subject", "issuer", "last_login_at"]
    search_fields = ["user__username", "subject"]
    readonly_fields = ["groups", "created_at", "last_login_at"]
    autocomplete_fields = ["user"]

    def has_module_permission(self, request: HttpRequest) -> bool:
        return request.user.is_superuser

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return request.user.is_superuser

    def has_add_permission(self, request: HttpRequest) -> bool:
        return request.user.is_superuser

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return request.user.is_superuser

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return request.user.is_superuser
