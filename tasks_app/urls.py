from __future__ import annotations

from django.urls import path

from tasks_app.features.schedules import views as schedule_views
from tasks_app.surfaces import (
    attempt_views,
    comment_views,
    followup_views,
    intake_views,
    plan_views,
    skill_views,
    unit_views,
    views,
)

urlpatterns = [
    path("plans/<int:plan_id>/", views.plan_detail, name="plan-detail"),
    path("plans/<int:plan_id>/accept", views.plan_accept_view, name="plan-accept"),
    path("plans/<int:plan_id>/edit", plan_views.plan_edit_view, name="plan-edit"),
    path("plans/<int:plan_id>/reject", plan_views.plan_reject_view, name="plan-reject"),
    path("sessions/<int:session_id>/plans", views.session_plans_view, name="session-plans"),
    path(
        "sessions/<int:session_id>/intent", intake_views.session_intent_view, name="session-intent"
    ),
    path(
        "sessions/<int:session_id>/plans/upload",
        intake_views.plan_upload_view,
        name="plan-upload",
    ),
    path(
        "projects/<int:project_id>/intent", intake_views.project_intent_view, name="project-intent"
    ),
    path("demo/replay", intake_views.demo_replay_view, name="demo-replay"),
    path("tasks/", views.task_board_view, name="task-board"),
    path(
        "projects/<int:project_id>/schedules/",
        schedule_views.project_schedules_view,
        name="project-schedules",
    ),
    path(
        "schedules/<int:schedule_id>/", schedule_views.schedule_detail_view, name="schedule-detail"
    ),
    path(
        "schedules/<int:schedule_id>/<str:action>",
        schedule_views.schedule_action_view,
        name="schedule-action",
    ),
    path("tasks/<int:task_id>/review", unit_views.task_review, name="task-review"),
    path(
        "tasks/<int:task_id>/followups",
        followup_views.task_followup_view,
        name="task-followup",
    ),
    # Before tasks/<id>/<action>, which would take "attempts" for an action.
    path("tasks/<int:task_id>/attempts", attempt_views.task_attempts_view, name="task-attempts"),
    path(
        "tasks/<int:task_id>/attempts/<int:unit_id>/pick",
        attempt_views.attempt_pick_view,
        name="attempt-pick",
    ),
    path(
        "tasks/<int:task_id>/<str:action>",
        views.task_recover_view,
        name="task-recover",
    ),
    path("units/<int:unit_id>/", unit_views.unit_detail, name="unit-detail"),
    path(
        "units/<int:unit_id>/comments/new",
        comment_views.diff_comment_form,
        name="diff-comment-form",
    ),
    path("units/<int:unit_id>/comments", comment_views.diff_comment_add, name="diff-comment-add"),
    path(
        "comments/<int:comment_id>/addressed",
        comment_views.diff_comment_addressed,
        name="diff-comment-addressed",
    ),
    # The skills pages post here (stable names: skill-proposal-accept / -reject).
    path(
        "skills/proposals/<int:proposal_id>/accept",
        skill_views.proposal_accept_view,
        name="skill-proposal-accept",
    ),
    path(
        "skills/proposals/<int:proposal_id>/reject",
        skill_views.proposal_reject_view,
        name="skill-proposal-reject",
    ),
]
