from django.apps import AppConfig


class SfWebConfig(AppConfig):
    name = "sf_web"
    verbose_name = "SF"

    def ready(self) -> None:
        from sf_web import checks, doctor_checks  # noqa: F401  (the sf.* system checks)

        doctor_checks.register_checks()
