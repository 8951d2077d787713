from __future__ import annotations

from django.urls import path

from notify_app import views

urlpatterns = [
    path("notifications/", views.preferences, name="notify-preferences"),
    path("notifications/test", views.send_test, name="notify-test"),
    path("notifications/secret", views.rotate_secret, name="notify-secret"),
]
