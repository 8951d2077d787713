from django.apps import AppConfig


class AgentsAppConfig(AppConfig):
    name = "agents_app"
    verbose_name = "Agents"

    def ready(self) -> None:
        from agents_app import sandbox_checks  # noqa: F401  (registers sf.W010, sf.W011)
