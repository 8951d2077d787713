"""The admin, limited to a staff member's projects (superusers see everything).

A model admin names the path from its model to the project (``project_lookup``); its
list shows only rows of projects the person is a member of, and a row may be changed
or deleted only by an admin of its project. The rules are ``agents_app.access``'s.

Forms follow the same rule (issue 28, A3): every foreign key's choices are limited to
rows of the projects the person administers (``FK_PROJECT_PATHS``; a model with no
known path offers nothing), and people to those who share a project with them. A
row never moves between projects: the foreign key that leads to its project (and
``frozen_on_change``: who created it, whose membership it is) is read-only once the
row exists, for everyone — a session, plan or task moved to another project would
work in another repository, under another project's members.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.contrib.auth import get_user_model
from django.db.models import Model, Q, QuerySet
from django.http import HttpRequest

from agents_app.access import (
    Action,
    AnyUser,
    may,
    projects_administered,
    projects_visible,
)
from agents_app.models import Project

# How a foreign key's target model reaches its project ("" for Project itself).
FK_PROJECT_PATHS: dict[str, str] = {
    "agents_app.project": "",
    "agents_app.agentsession": "project",
    "agents_app.modetransition": "session__project",
    "agents_app.riskdecision": "session__project",
    "agents_app.traceevent": "session__project",
    "tasks_app.plan": "session__project",
    "tasks_app.planrequest": "session__project",
    "tasks_app.task": "plan__session__project",
    "tasks_app.unit": "task__plan__session__project",
    "tasks_app.schedule": "project",
    "skills_app.skill": "project",
    "skills_app.skillevalcase": "skill__project",
    "notify_app.notification": "project",
}


def choices_for(model: type[Model], user: AnyUser) -> QuerySet[Any] | None:
    """What a form may offer a non-superuser for a key to ``model`` (None: unchanged)."""
    if user.is_superuser:
        return None
    user_model = get_user_model()
    if model is user_model:
        shared = user_model.objects.filter(
            project_memberships__project__in=projects_visible(user)
        ).values("pk")
        return user_model.objects.filter(Q(pk__in=shared) | Q(pk=user.pk))
    path = FK_PROJECT_PATHS.get(model._meta.label_lower)
    if path is None:
        return model._default_manager.none()
    lookup = f"{path}__in" if path else "pk__in"
    return model._default_manager.filter(**{lookup: projects_administered(user)})


class ScopedForeignKeys:
    """Foreign-key and many-to-many choices limited to the person's projects (admins
    and inlines alike)."""

    def formfield_for_foreignkey(self, db_field: Any, request: Any, **kwargs: Any) -> Any:
        limited = choices_for(db_field.related_model, request.user)
        if limited is not None:
            kwargs["queryset"] = limited
        return super().formfield_for_foreignkey(db_field, request, **kwargs)  # type: ignore[misc]

    def formfield_for_manytomany(self, db_field: Any, request: Any, **kwargs: Any) -> Any:
        limited = choices_for(db_field.related_model, request.user)
        if limited is not None:
            kwargs["queryset"] = limited
        return super().formfield_for_manytomany(db_field, request, **kwargs)  # type: ignore[misc]


class ReadOnlyAdminMixin:
    """Evidence and logs: listed and shown in the admin, never added, changed or deleted
    there (the code that writes them is their only writer). Before the admin class in the
    bases; for a model admin or an inline alike."""

    def has_add_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False


class ScopedInline(ScopedForeignKeys, admin.TabularInline):
    pass


class ProjectScopedAdmin(ScopedForeignKeys, admin.ModelAdmin):
    project_lookup = "project"  # e.g. "session__project"; "" for Project itself
    frozen_on_change: tuple[str, ...] = ()  # other keys that never change once set

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        queryset = super().get_queryset(request)
        if request.user.is_superuser:
            return queryset
        field = f"{self.project_lookup}__in" if self.project_lookup else "pk__in"
        return queryset.filter(**{field: projects_visible(request.user)})

    def get_readonly_fields(self, request: HttpRequest, obj: Model | None = None) -> Any:
        fields = list(super().get_readonly_fields(request, obj))
        if obj is None:
            return fields
        first_hop = self.project_lookup.split("__")[0] if self.project_lookup else ""
        frozen = [name for name in (first_hop, *self.frozen_on_change) if name]
        return fields + [name for name in frozen if name not in fields]

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return super().has_change_permission(request, obj) and self._project_admin(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return super().has_delete_permission(request, obj) and self._project_admin(request, obj)

    def _project_admin(self, request: HttpRequest, obj: Model | None) -> bool:
        if obj is None or request.user.is_superuser:
            return True
        return may(request.user, self.project_of(obj), Action.MANAGE_MEMBERS)

    def project_of(self, obj: Model) -> Project:
        target: Any = obj
        for part in filter(None, self.project_lookup.split("__")):
            target = getattr(target, part)
        return target
