from django.apps import AppConfig


class SfWebConfig(AppConfig):
    name = "sf_web"
    verbose_name = "SF"

    def ready(self) -> None:
        from sf_web import checks  # noqa: F401  (registers the sf.* system checks)
