from __future__ import annotations

from django.urls import path

from dashboard_app import doctor, members, metrics_views, views

urlpatterns = [
    path("", views.dashboard, name="dashboard"),
    path("healthz", views.healthz, name="healthz"),
    path("metrics/", metrics_views.metrics_page, name="metrics"),
    path("doctor/", doctor.doctor_page, name="doctor"),
    path("projects/<int:project_id>/members/", members.project_members, name="project-members"),
]
