"""Registering a repository: its own permission, one project per resolved path, demos
marked (docs/security.md, "Registering repositories").

Existing rows: each stored path is resolved (symlinks followed, ``.``/``..`` gone) and
stored resolved, then the unique constraint is added. Two projects whose paths resolve
to the same repository cannot both stay: the migration stops and names them all (the
constraint could not be added anyway), so an operator deletes or re-points the extra
ones (``UPDATE agents_app_project SET repo_path=…``) and migrates again — nothing is
merged or dropped behind their back. Projects made by **Replay the demo** (named
``demo greeter N``, repository under ``SF_DATA_DIR/demo/``) are marked as demos.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from django.db import migrations, models

DEMO_NAME = "demo greeter"


class DuplicateRepositories(Exception):
    """Two or more projects on one repository: the operator decides which stays."""


def resolve_paths(apps: Any, schema_editor: Any) -> None:
    project_model = apps.get_model("agents_app", "Project")
    by_path: dict[str, list[Any]] = defaultdict(list)
    for project in project_model.objects.order_by("pk"):
        by_path[str(Path(project.repo_path).expanduser().resolve())].append(project)
    duplicates = {path: rows for path, rows in by_path.items() if len(rows) > 1}
    if duplicates:
        listed = "; ".join(
            f"{path}: " + ", ".join(f"{row.name!r} (id {row.pk})" for row in rows)
            for path, rows in sorted(duplicates.items())
        )
        raise DuplicateRepositories(
            f"{len(duplicates)} repositories are registered by more than one project "
            f"(one project per repository now): {listed}. Delete or re-point all but one "
            "of each, then run migrate again."
        )
    for path, (project,) in by_path.items():
        demo = project.name.startswith(DEMO_NAME) and "/demo/" in path
        if project.repo_path != path or demo:
            project_model.objects.filter(pk=project.pk).update(repo_path=path, demo=demo)


class Migration(migrations.Migration):
    dependencies = [
        ("agents_app", "0016_session_dispatch_version"),
    ]

    operations = [
        migrations.AlterModelOptions(
            name="project",
            options={
                "ordering": ["name"],
                "permissions": [
                    ("register_repository", "Can register a repository as a new project")
                ],
            },
        ),
        migrations.AddField(
            model_name="project",
            name="demo",
            field=models.BooleanField(
                default=False, help_text="made by Replay the demo: its roles count nowhere else"
            ),
        ),
        migrations.RunPython(resolve_paths, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name="project",
            constraint=models.UniqueConstraint(
                fields=("repo_path",), name="project_repo_path_unique"
            ),
        ),
    ]
