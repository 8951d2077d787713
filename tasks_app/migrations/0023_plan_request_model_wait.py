from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("tasks_app", "0022_best_of_n_attempt_rounds"),
    ]

    operations = [
        migrations.AddField(
            model_name="planrequest",
            name="model_request_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="planrequest",
            name="model_request_tokens",
            field=models.PositiveIntegerField(blank=True, null=True),
        ),
    ]
