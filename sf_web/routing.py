"""Every websocket route of SF, gathered from the apps."""

from __future__ import annotations

from django.urls import URLPattern, path

from agents_app.consumers import ApprovalsConsumer, SessionConsumer
from dashboard_app.consumers import SessionTableConsumer, SystemStatusConsumer
from notify_app.consumers import NotificationConsumer
from tasks_app.surfaces.consumers import SessionPlansConsumer, TaskBoardConsumer, UnitConsumer

websocket_urlpatterns: list[URLPattern] = [
    path("ws/status/", SystemStatusConsumer.as_asgi(), name="ws-status"),
    path("ws/sessions/", SessionTableConsumer.as_asgi(), name="ws-sessions"),
    path("ws/sessions/<int:session_id>/", SessionConsumer.as_asgi(), name="ws-session"),
    path(
        "ws/sessions/<int:session_id>/plans/",
        SessionPlansConsumer.as_asgi(),
        name="ws-session-plans",
    ),
    path("ws/tasks/", TaskBoardConsumer.as_asgi(), name="ws-tasks"),
    path("ws/approvals/", ApprovalsConsumer.as_asgi(), name="ws-approvals"),
    path("ws/units/<int:unit_id>/", UnitConsumer.as_asgi(), name="ws-unit"),
    path("ws/notifications/", NotificationConsumer.as_asgi(), name="ws-notifications"),
]
