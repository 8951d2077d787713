# Single sign-on (docs/sso.md): provider accounts, group-to-role rows, and who gave a role.

import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("agents_app", "0001_squashed_0017_project_registration"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="SsoGroupRole",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "group",
                    models.CharField(
                        help_text="A value of the provider's groups claim, exactly as sent.",
                        max_length=200,
                    ),
                ),
                (
                    "role",
                    models.CharField(
                        choices=[
                            ("viewer", "Viewer"),
                            ("operator", "Operator"),
                            ("approver", "Approver"),
                            ("admin", "Admin"),
                        ],
                        max_length=8,
                    ),
                ),
                ("created_at", models.DateTimeField(default=django.utils.timezone.now)),
            ],
            options={
                "verbose_name": "SSO group role",
                "ordering": ["group", "project"],
            },
        ),
        migrations.CreateModel(
            name="SsoIdentity",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("issuer", models.CharField(max_length=400)),
                ("subject", models.CharField(max_length=255)),
                ("groups", models.JSONField(blank=True, default=list)),
                ("created_at", models.DateTimeField(default=django.utils.timezone.now)),
                ("last_login_at", models.DateTimeField(blank=True, null=True)),
            ],
            options={
                "verbose_name": "SSO identity",
                "verbose_name_plural": "SSO identities",
                "ordering": ["user__username"],
            },
        ),
        migrations.AddField(
            model_name="projectmembership",
            name="source",
            field=models.CharField(
                choices=[("manual", "Manual"), ("sso", "single sign-on")],
                default="manual",
                max_length=8,
            ),
        ),
        migrations.AddConstraint(
            model_name="projectmembership",
            constraint=models.CheckConstraint(
                condition=models.Q(("source__in", ["manual", "sso"])),
                name="membership_source_valid",
            ),
        ),
        migrations.AddField(
            model_name="ssogrouprole",
            name="project",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="sso_group_roles",
                to="agents_app.project",
            ),
        ),
        migrations.AddField(
            model_name="ssoidentity",
            name="user",
            field=models.OneToOneField(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="sso_identity",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AddConstraint(
            model_name="ssogrouprole",
            constraint=models.UniqueConstraint(
                fields=("group", "project"), name="sso_group_role_unique"
            ),
        ),
        migrations.AddConstraint(
            model_name="ssogrouprole",
            constraint=models.CheckConstraint(
                condition=models.Q(("role__in", ["viewer", "operator", "approver", "admin"])),
                name="sso_group_role_valid",
            ),
        ),
        migrations.AddConstraint(
            model_name="ssogrouprole",
            constraint=models.CheckConstraint(
                condition=models.Q(("group", ""), _negated=True), name="sso_group_role_group_set"
            ),
        ),
        migrations.AddConstraint(
            model_name="ssoidentity",
            constraint=models.UniqueConstraint(
                fields=("issuer", "subject"), name="sso_identity_unique"
            ),
        ),
    ]
