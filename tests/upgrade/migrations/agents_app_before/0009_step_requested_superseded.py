# /next runs one unit then pauses (step_requested); a pending steer a later direct
# command overrode is marked superseded, not silently dropped.

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("agents_app", "0008_agentsession_finished_at"),
    ]

    operations = [
        migrations.AddField(
            model_name="agentsession",
            name="step_requested",
            field=models.BooleanField(default=False),
        ),
        migrations.RemoveConstraint(
            model_name="modetransition",
            name="transition_status_valid",
        ),
        migrations.AlterField(
            model_name="modetransition",
            name="status",
            field=models.CharField(
                choices=[
                    ("pending", "Pending"),
                    ("applied", "Applied"),
                    ("cancelled", "Cancelled"),
                    ("superseded", "Superseded"),
                ],
                default="pending",
                max_length=12,
            ),
        ),
        migrations.AddConstraint(
            model_name="modetransition",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("status__in", ["pending", "applied", "cancelled", "superseded"])
                ),
                name="transition_status_valid",
            ),
        ),
    ]
