from django.apps import AppConfig


class SkillsAppConfig(AppConfig):
    name = "skills_app"
    verbose_name = "Skills"

    def ready(self) -> None:
        from skills_app import commands, doctor_checks, receivers  # noqa: F401  (receivers)

        doctor_checks.register_checks()
