from __future__ import annotations

from django.urls import path

from skills_app import views

urlpatterns = [
    path("projects/<int:project_id>/skills/", views.project_skills_view, name="project-skills"),
    path(
        "projects/<int:project_id>/skills/sync",
        views.project_skills_sync_view,
        name="project-skills-sync",
    ),
    path(
        "projects/<int:project_id>/skills/<str:name>/",
        views.skill_detail_view,
        name="skill-detail",
    ),
    path(
        "projects/<int:project_id>/skills/<str:name>/files/<path:file>",
        views.skill_file_view,
        name="skill-file",
    ),
]
