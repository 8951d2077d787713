from __future__ import annotations

from django.apps import AppConfig


class McpAppConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "mcp_app"
    verbose_name = "MCP server"
