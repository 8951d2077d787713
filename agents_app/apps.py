from django.apps import AppConfig


class AgentsAppConfig(AppConfig):
    name = "agents_app"
    verbose_name = "Agents"

    def ready(self) -> None:
        from agents_app import doctor_checks, sandbox_checks  # noqa: F401  (sf.W010, sf.W011)

        doctor_checks.register_checks()
