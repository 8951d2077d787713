from __future__ import annotations

from django.urls import path

from dashboard_app import views

urlpatterns = [
    path("", views.dashboard, name="dashboard"),
    path("healthz", views.healthz, name="healthz"),
]
