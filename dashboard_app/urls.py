from __future__ import annotations

from django.urls import path

from dashboard_app import members, views

urlpatterns = [
    path("", views.dashboard, name="dashboard"),
    path("healthz", views.healthz, name="healthz"),
    path("projects/<int:project_id>/members/", members.project_members, name="project-members"),
]
