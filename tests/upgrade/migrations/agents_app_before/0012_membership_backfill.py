"""Existing projects get admins, so an upgraded install is not locked out.

Sessions record their creator (``AgentSession.created_by``, a person who started the
session on the web, or nobody for CLI and headless sessions). Each project's session
creators become its admins; a project none of whose sessions names a creator gets
every superuser as admin (superusers are admin everywhere anyway, but a membership row
lets the last-admin rule and the members page start from someone).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import migrations


def backfill(apps: Any, schema_editor: Any) -> None:
    project_model = apps.get_model("agents_app", "Project")
    session_model = apps.get_model("agents_app", "AgentSession")
    membership_model = apps.get_model("agents_app", "ProjectMembership")
    user_model = apps.get_model(settings.AUTH_USER_MODEL)
    superusers = list(user_model.objects.filter(is_superuser=True).values_list("pk", flat=True))
    for project in project_model.objects.all():
        creators = set(
            session_model.objects.filter(project=project, created_by__isnull=False).values_list(
                "created_by_id", flat=True
            )
        )
        for user_id in creators or superusers:
            membership_model.objects.get_or_create(
                project=project, user_id=user_id, defaults={"role": "admin"}
            )


class Migration(migrations.Migration):
    dependencies = [
        ("agents_app", "0011_project_membership"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [migrations.RunPython(backfill, migrations.RunPython.noop)]
