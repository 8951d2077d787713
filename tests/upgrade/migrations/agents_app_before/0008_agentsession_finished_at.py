"""``AgentSession.finished_at``: when a session became completed or failed.

Backfilled from the transition log: ``session_finish`` writes one applied transition
whose reason starts ``session completed:`` or ``session failed:``; the latest such
transition of a finished session is when it finished. A session finished some other
way (the admin) has no such row and keeps NULL: no time is made up.
"""

from __future__ import annotations

from typing import Any

from django.db import migrations, models
from django.db.models import OuterRef, Subquery

FINISHED = ("completed", "failed")


def backfill_finished_at(apps: Any, schema_editor: Any) -> None:
    AgentSession = apps.get_model("agents_app", "AgentSession")
    ModeTransition = apps.get_model("agents_app", "ModeTransition")
    for status in FINISHED:
        finished = (
            ModeTransition.objects.filter(
                session=OuterRef("pk"),
                status="applied",
                reason__startswith=f"session {status}:",
            )
            .order_by("-applied_at", "-pk")
            .values("applied_at")[:1]
        )
        AgentSession.objects.filter(status=status, finished_at__isnull=True).update(
            finished_at=Subquery(finished)
        )


class Migration(migrations.Migration):
    dependencies = [
        ("agents_app", "0007_agentsession_pause_cause"),
    ]

    operations = [
        migrations.AddField(
            model_name="agentsession",
            name="finished_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.RunPython(backfill_finished_at, migrations.RunPython.noop, elidable=True),
    ]
