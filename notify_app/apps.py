from django.apps import AppConfig


class NotifyAppConfig(AppConfig):
    name = "notify_app"
    verbose_name = "Notifications"

    def ready(self) -> None:
        # Imported here: the app registry must be ready before models load.
        from notify_app import receivers

        receivers.connect()
