"""The database constraint of agents_app's evidence on units, held by the app that owns units.

agents_app's trace events, model calls and risk decisions keep a unit's id in ``unit_id``
(agents_app 0001_squashed_0017_project_registration); the relation is declared here, in
tasks_app.models.evidence. This migration makes sure each ``unit_id`` has the foreign key
constraint the old ``ForeignKey`` had: ``REFERENCES tasks_app_unit (id) DEFERRABLE
INITIALLY DEFERRED``, no action in the database (the ORM deletes or nulls the evidence of a
deleted unit first, as before).

A database upgraded from agents_app 0017 already has that constraint (agents_app 0002 and
0014 made it): it is kept as it is, under its name. A fresh database gets it here. The
dependency on agents_app names 0017, which the squashed migration replaces: it is the same
node for both kinds of database.
"""

from typing import Any

from django.db import migrations

EVIDENCE_TABLES = ("agents_app_traceevent", "agents_app_modelcall", "agents_app_riskdecision")
TARGET = ("tasks_app_unit", "id")


def _unit_constraints(schema_editor: Any, table: str) -> list[str]:
    connection = schema_editor.connection
    with connection.cursor() as cursor:
        found = connection.introspection.get_constraints(cursor, table)
    return sorted(
        name
        for name, info in found.items()
        if info["foreign_key"] == TARGET and info["columns"] == ["unit_id"]
    )


def add_constraints(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return  # SQLite cannot add a constraint to a table; the ORM still cascades
    quote = schema_editor.quote_name
    for table in EVIDENCE_TABLES:
        if _unit_constraints(schema_editor, table):
            continue  # upgraded: agents_app's old foreign key, now tasks_app's
        name = f"{table}_unit_id_fk_tasks_app_unit_id"
        schema_editor.execute(
            f"ALTER TABLE {quote(table)} ADD CONSTRAINT {quote(name)} "
            f"FOREIGN KEY ({quote('unit_id')}) REFERENCES {quote(TARGET[0])} ({quote('id')})"
            + schema_editor.connection.ops.deferrable_sql()  # as Django's own foreign keys
        )


def drop_constraints(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    quote = schema_editor.quote_name
    for table in EVIDENCE_TABLES:
        for name in _unit_constraints(schema_editor, table):
            schema_editor.execute(f"ALTER TABLE {quote(table)} DROP CONSTRAINT {quote(name)}")


class Migration(migrations.Migration):
    dependencies = [
        ("tasks_app", "0015_worker_live_counts"),
        ("agents_app", "0017_project_registration"),
    ]

    operations = [migrations.RunPython(add_constraints, drop_constraints)]
