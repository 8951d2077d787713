"""Admin: the outbox and its delivery log (read-only), and people's preferences.

Scoped like the rest of the admin to a staff member's projects (``ProjectScopedAdmin``);
nobody edits the log: it records what was sent, so it is view-only for everyone."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import Model, Q, QuerySet
from django.http import HttpRequest

from agents_app.access import projects_visible
from agents_app.admin_scope import ProjectScopedAdmin, ReadOnlyAdminMixin
from notify_app.models import Delivery, Notification, NotificationPreference


class ReadOnlyAdmin(ReadOnlyAdminMixin, ProjectScopedAdmin):
    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        # A test notification has no project: its person (and superusers) see it.
        queryset = admin.ModelAdmin.get_queryset(self, request)
        if request.user.is_superuser:
            return queryset
        mine = Q(**{f"{self.project_lookup}__in": projects_visible(request.user)})
        return queryset.filter(mine | Q(**{self.own_lookup: request.user.pk})).distinct()

    own_lookup = "deliveries__user"


class DeliveryInline(admin.TabularInline):
    model = Delivery
    extra = 0
    can_delete = False
    fields = ("user", "channel", "status", "attempts", "next_attempt_at", "sent_at", "last_error")
    readonly_fields = fields

    def has_add_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False


@admin.register(Notification)
class NotificationAdmin(ReadOnlyAdmin):
    list_display = ["created_at", "kind", "project", "session", "text"]
    list_filter = ["kind", "created_at"]
    search_fields = ["text", "dedupe_key"]
    inlines = [DeliveryInline]


@admin.register(Delivery)
class DeliveryAdmin(ReadOnlyAdmin):
    """The delivery log: what went to whom, how often it was tried, the last error."""

    project_lookup = "notification__project"
    own_lookup = "user"
    list_display = [
        "created_at",
        "notification",
        "user",
        "channel",
        "status",
        "attempts",
        "next_attempt_at",
        "sent_at",
        "short_error",
    ]
    list_filter = ["status", "channel", "notification__kind"]
    search_fields = ["user__username", "last_error", "notification__text"]
    list_select_related = ["notification", "user"]

    @admin.display(description="last error")
    def short_error(self, obj: Delivery) -> str:
        return obj.last_error[:80]


@admin.register(NotificationPreference)
class NotificationPreferenceAdmin(admin.ModelAdmin):
    """Superusers only (a staff member edits their own on /notifications/)."""

    list_display = ["user", "email", "browser", "webhook_url"]
    exclude = ["webhook_secret"]

    def has_module_permission(self, request: HttpRequest) -> bool:
        return bool(request.user.is_superuser)

    def has_view_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return bool(request.user.is_superuser)
