"""Every websocket route of SF, gathered from the apps."""

from __future__ import annotations

from django.urls import URLPattern, path

from agents_app.consumers import SessionConsumer
from sf_web.consumers import SystemStatusConsumer
from tasks_app.consumers import TaskBoardConsumer

websocket_urlpatterns: list[URLPattern] = [
    path("ws/status/", SystemStatusConsumer.as_asgi(), name="ws-status"),
    path("ws/sessions/<int:session_id>/", SessionConsumer.as_asgi(), name="ws-session"),
    path("ws/tasks/", TaskBoardConsumer.as_asgi(), name="ws-tasks"),
]
