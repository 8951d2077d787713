from django.apps import AppConfig


class SkillsAppConfig(AppConfig):
    name = "skills_app"
    verbose_name = "Skills"
