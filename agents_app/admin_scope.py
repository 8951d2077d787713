"""The admin, limited to a staff member's projects (superusers see everything).

A model admin names the path from its model to the project (``project_lookup``); its
list shows only rows of projects the person is a member of, and a row may be changed
or deleted only by an admin of its project. The rules are ``agents_app.access``'s.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import Model, QuerySet
from django.http import HttpRequest

from agents_app.access import Action, may, projects_visible
from agents_app.models import Project


class ProjectScopedAdmin(admin.ModelAdmin):
    project_lookup = "project"  # e.g. "session__project"; "" for Project itself

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        queryset = super().get_queryset(request)
        if request.user.is_superuser:
            return queryset
        field = f"{self.project_lookup}__in" if self.project_lookup else "pk__in"
        return queryset.filter(**{field: projects_visible(request.user)})

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
