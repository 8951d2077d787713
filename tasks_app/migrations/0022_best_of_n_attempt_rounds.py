# Best-of-N (docs/best-of-n.md): Task.best_of, the AttemptRound table, Unit.round and
# Unit.variant.

import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("tasks_app", "0021_forge_issue"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="task",
            name="best_of",
            field=models.PositiveSmallIntegerField(default=1),
        ),
        migrations.AddConstraint(
            model_name="task",
            constraint=models.CheckConstraint(
                condition=models.Q(("best_of__gte", 1), ("best_of__lte", 8)),
                name="task_best_of_range",
            ),
        ),
        migrations.CreateModel(
            name="AttemptRound",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("size", models.PositiveSmallIntegerField()),
                ("started_at", models.DateTimeField(default=django.utils.timezone.now)),
                ("finished_at", models.DateTimeField(blank=True, null=True)),
                ("reason", models.TextField(blank=True)),
                ("ranking", models.JSONField(blank=True, default=list)),
                ("chosen_kind", models.CharField(default="system", max_length=8)),
                ("chosen_label", models.CharField(blank=True, max_length=150)),
                ("chosen_at", models.DateTimeField(blank=True, null=True)),
                (
                    "chosen_user",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "task",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="rounds",
                        to="tasks_app.task",
                    ),
                ),
                (
                    "winner",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to="tasks_app.unit",
                    ),
                ),
            ],
            options={
                "ordering": ["task_id", "pk"],
                "constraints": [
                    models.CheckConstraint(
                        condition=models.Q(("size__gte", 2), ("size__lte", 8)),
                        name="attempt_round_size",
                    ),
                    models.CheckConstraint(
                        condition=models.Q(("chosen_kind__in", ["user", "system"])),
                        name="attempt_round_chosen_kind",
                    ),
                ],
            },
        ),
        migrations.AddField(
            model_name="unit",
            name="round",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="attempts",
                to="tasks_app.attemptround",
            ),
        ),
        migrations.AddField(
            model_name="unit",
            name="variant",
            field=models.JSONField(blank=True, default=dict),
        ),
    ]
