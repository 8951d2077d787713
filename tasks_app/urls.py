from __future__ import annotations

from django.urls import path

from tasks_app import views

urlpatterns = [
    path("plans/<int:plan_id>/", views.plan_detail, name="plan-detail"),
    path("plans/<int:plan_id>/accept", views.plan_accept_view, name="plan-accept"),
    path("tasks/", views.task_board_view, name="task-board"),
]
