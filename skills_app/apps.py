from django.apps import AppConfig


class SkillsAppConfig(AppConfig):
    name = "skills_app"
    verbose_name = "Skills"

    def ready(self) -> None:
        from skills_app import commands, receivers  # noqa: F401  (connect the receivers)
