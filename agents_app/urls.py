from __future__ import annotations

from django.urls import path

from agents_app import views
from agents_app.gate import views as gate_views

urlpatterns = [
    path("approvals/", gate_views.approvals, name="approvals"),
    path("approvals/<int:decision_id>/review", gate_views.approval_review, name="approval-review"),
    path("projects/", views.project_list, name="project-list"),
    path("projects/<int:project_id>/", views.project_detail, name="project-detail"),
    path("sessions/<int:session_id>/", views.session_detail, name="session-detail"),
    path("sessions/<int:session_id>/command", views.session_command, name="session-command"),
    path("sessions/<int:session_id>/axis", views.session_axis, name="session-axis"),
    path(
        "transitions/<int:transition_id>/<str:action>",
        views.transition_action,
        name="transition-action",
    ),
]
