# The project's hooks (docs/hooks.md): a trace event kind of their own.

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("agents_app", "0018_sso"),
    ]

    operations = [
        migrations.AlterField(
            model_name="traceevent",
            name="kind",
            field=models.CharField(
                choices=[
                    ("model_step", "Model Step"),
                    ("tool_call", "Tool Call"),
                    ("decision", "Decision"),
                    ("note", "Note"),
                    ("error", "Error"),
                    ("hook", "Hook"),
                ],
                max_length=12,
            ),
        ),
        migrations.RemoveConstraint(
            model_name="traceevent",
            name="trace_kind_valid",
        ),
        migrations.AddConstraint(
            model_name="traceevent",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("kind__in", ["model_step", "tool_call", "decision", "note", "error", "hook"])
                ),
                name="trace_kind_valid",
            ),
        ),
    ]
