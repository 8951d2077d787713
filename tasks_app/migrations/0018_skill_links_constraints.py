"""The database constraints of skills_app's links to units and tasks, held by the app that
owns units and tasks.

skills_app's skill uses keep a unit's id in ``unit_id`` and its proposals the writing
task's id in ``task_id`` (skills_app 0002_skills_stand_alone); the relations are declared
here, in tasks_app.models.evidence. This migration makes sure each column has the foreign
key constraint the old ``ForeignKey`` had: ``REFERENCES tasks_app_unit (id)`` /
``tasks_app_task (id)``, ``DEFERRABLE INITIALLY DEFERRED``, no action in the database (the
ORM deletes a unit's uses and unlinks a task's proposals first, as before).

A database upgraded from skills_app 0001_skills already has those constraints: they are
kept as they are, under their names. A fresh database gets them here. The dependency on
skills_app names 0001_skills, which 0002_skills_stand_alone replaces: it is the same node
for both kinds of database. As 0016_evidence_unit_constraints does for agents_app.
"""

from typing import Any

from django.db import migrations

# (table, column, the table and column it references)
LINKS = (
    ("skills_app_skilluse", "unit_id", ("tasks_app_unit", "id")),
    ("skills_app_skillproposal", "task_id", ("tasks_app_task", "id")),
)


def _constraints(schema_editor: Any, table: str, column: str, target: tuple[str, str]) -> list[str]:
    connection = schema_editor.connection
    with connection.cursor() as cursor:
        found = connection.introspection.get_constraints(cursor, table)
    return sorted(
        name
        for name, info in found.items()
        if info["foreign_key"] == target and info["columns"] == [column]
    )


def add_constraints(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return  # SQLite cannot add a constraint to a table; the ORM still cascades
    quote = schema_editor.quote_name
    for table, column, target in LINKS:
        if _constraints(schema_editor, table, column, target):
            continue  # upgraded: skills_app's old foreign key, now tasks_app's
        name = f"{table}_{column}_fk_{target[0]}_{target[1]}"
        schema_editor.execute(
            f"ALTER TABLE {quote(table)} ADD CONSTRAINT {quote(name)} "
            f"FOREIGN KEY ({quote(column)}) REFERENCES {quote(target[0])} ({quote(target[1])})"
            + schema_editor.connection.ops.deferrable_sql()  # as Django's own foreign keys
        )


def drop_constraints(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    quote = schema_editor.quote_name
    for table, column, target in LINKS:
        for name in _constraints(schema_editor, table, column, target):
            schema_editor.execute(f"ALTER TABLE {quote(table)} DROP CONSTRAINT {quote(name)}")


class Migration(migrations.Migration):
    dependencies = [
        ("tasks_app", "0017_plan_lint_rejected_by"),
        ("skills_app", "0001_skills"),
    ]

    operations = [migrations.RunPython(add_constraints, drop_constraints)]
