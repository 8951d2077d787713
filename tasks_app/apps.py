from django.apps import AppConfig


class TasksAppConfig(AppConfig):
    name = "tasks_app"
    verbose_name = "Tasks"

    def ready(self) -> None:
        # Celery worker lifecycle hooks (heartbeats) are connected on import.
        from tasks_app import workers  # noqa: F401
