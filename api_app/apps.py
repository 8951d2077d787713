from __future__ import annotations

from django.apps import AppConfig


class ApiAppConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "api_app"
    verbose_name = "HTTP API"
