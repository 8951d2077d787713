from __future__ import annotations

from django.apps import AppConfig


class ApiAppConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "api_app"
    verbose_name = "HTTP API"

    def ready(self) -> None:
        from django.db.models.signals import pre_delete

        from agents_app.models import Project
        from api_app.tokens import tokens_of_project_revoke

        def revoke(sender: object, instance: Project, **kwargs: object) -> None:
            tokens_of_project_revoke(instance)

        # A token restricted to a deleted project alone must not become unrestricted.
        pre_delete.connect(revoke, sender=Project, weak=False, dispatch_uid="api_app.tokens_revoke")
