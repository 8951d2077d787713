from django.apps import AppConfig


class AgentsAppConfig(AppConfig):
    name = "agents_app"
    verbose_name = "Agents"

    def ready(self) -> None:
        from agents_app import (  # noqa: F401  (sf.W010 to sf.W015)
            doctor_checks,
            egress_checks,
            sandbox_checks,
        )

        doctor_checks.register_checks()
