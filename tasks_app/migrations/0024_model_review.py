# A model's review of a unit's verified work (tasks_app.features.model_review), and its
# line comments marked as the model's.

import decimal

import django.db.models.deletion
import django.utils.timezone
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("tasks_app", "0023_plan_request_model_wait"),
    ]

    operations = [
        migrations.AddField(
            model_name="diffcomment",
            name="by_model",
            field=models.BooleanField(default=False),
        ),
        migrations.CreateModel(
            name="ModelReview",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "mode",
                    models.CharField(
                        choices=[("advisory", "Advisory"), ("required", "Required")], max_length=8
                    ),
                ),
                (
                    "verdict",
                    models.CharField(
                        choices=[
                            ("pending", "Pending"),
                            ("approve", "Approve"),
                            ("request_changes", "Request Changes"),
                            ("no_verdict", "No Verdict"),
                        ],
                        default="pending",
                        max_length=16,
                    ),
                ),
                ("reasons", models.TextField(blank=True)),
                ("notes", models.JSONField(blank=True, default=list)),
                ("sent_back", models.BooleanField(default=False)),
                ("model", models.CharField(blank=True, max_length=200)),
                ("tokens_in", models.PositiveIntegerField(default=0)),
                ("tokens_out", models.PositiveIntegerField(default=0)),
                (
                    "cost",
                    models.DecimalField(
                        decimal_places=6, default=decimal.Decimal("0"), max_digits=12
                    ),
                ),
                ("started_at", models.DateTimeField(default=django.utils.timezone.now)),
                ("finished_at", models.DateTimeField(blank=True, null=True)),
                (
                    "unit",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="model_review",
                        to="tasks_app.unit",
                    ),
                ),
            ],
            options={
                "constraints": [
                    models.CheckConstraint(
                        condition=models.Q(
                            ("verdict__in", ["pending", "approve", "request_changes", "no_verdict"])
                        ),
                        name="model_review_verdict_valid",
                    ),
                    models.CheckConstraint(
                        condition=models.Q(("mode__in", ["advisory", "required"])),
                        name="model_review_mode_valid",
                    ),
                    models.CheckConstraint(
                        condition=models.Q(
                            ("sent_back", False),
                            models.Q(("mode", "required"), ("verdict", "request_changes")),
                            _connector="OR",
                        ),
                        name="model_review_sent_back_by_request",
                    ),
                ],
            },
        ),
    ]
