"""agents_app's migrations stand alone, and a database made by the old ones upgrades intact.

Until agents_app 0001_squashed_0017_project_registration, agents_app's 0002 and 0014 gave
the evidence tables foreign keys to ``tasks_app.Unit`` and depended on tasks_app's
migrations. The old files are kept in tests/upgrade/migrations/agents_app_before, so that
a scratch database can be brought to exactly the state a database at that time had, filled,
and upgraded with the code of today. Each test makes its own scratch database (real
PostgreSQL, a name of its own) and drops it.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal
from typing import Any

import psycopg
import pytest
from django.db import connections
from django.db.migrations.executor import MigrationExecutor
from django.db.migrations.loader import MigrationLoader
from django.test import override_settings

BEFORE = {"agents_app": "tests.upgrade.migrations.agents_app_before"}
SQUASHED = ("agents_app", "0001_squashed_0017_project_registration")
CONSTRAINTS = ("tasks_app", "0016_evidence_unit_constraints")
OLD_LEAVES = [("agents_app", "0017_project_registration"), ("tasks_app", "0015_worker_live_counts")]
EVIDENCE_TABLES = ("agents_app_traceevent", "agents_app_modelcall", "agents_app_riskdecision")


@pytest.fixture
def unblocked(django_db_blocker: Any) -> Iterator[None]:
    """Database access without the test database: these tests make databases of their own."""
    with django_db_blocker.unblock():
        yield


@contextmanager
def scratch_database() -> Iterator[Any]:
    """A new, empty database on the test server, as a Django connection; dropped after."""
    default = connections["default"]
    name = f"sf_migrations_{uuid.uuid4().hex[:12]}"
    admin = psycopg.connect(
        dbname="postgres",
        **{k: v for k, v in default.get_connection_params().items() if k != "dbname"},
        autocommit=True,
    )
    admin.execute(f'CREATE DATABASE "{name}"')
    alias = f"scratch_{name}"
    connection = default.__class__({**default.settings_dict, "NAME": name}, alias)
    connections[alias] = connection
    try:
        yield connection
    finally:
        connection.close()
        del connections[alias]
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.close()


def migrate(connection: Any, targets: list[tuple[str, str]]) -> MigrationExecutor:
    executor = MigrationExecutor(connection)
    executor.migrate(targets)
    return MigrationExecutor(connection)  # reloaded: what is applied now


def leaves(loader: MigrationLoader) -> list[tuple[str, str]]:
    return loader.graph.leaf_nodes()


def unit_foreign_keys(connection: Any) -> dict[str, list[str]]:
    """Per evidence table, the foreign keys of ``unit_id`` to ``tasks_app_unit``, as SQL."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT conrelid::regclass::text, pg_get_constraintdef(oid) FROM pg_constraint"
            " WHERE contype = 'f' AND confrelid = 'tasks_app_unit'::regclass"
            " AND conrelid::regclass::text = ANY(%s) ORDER BY 1",
            [list(EVIDENCE_TABLES)],
        )
        found: dict[str, list[str]] = {}
        for table, definition in cursor.fetchall():
            found.setdefault(table, []).append(definition)
    return found


def test_agents_app_migrates_alone_on_an_empty_database(unblocked: None) -> None:
    loader = MigrationLoader(None, ignore_no_migrations=True)
    leaf = max(key for key in leaves(loader) if key[0] == "agents_app")
    plan = loader.graph.forwards_plan(leaf)
    assert SQUASHED in plan
    assert not [key for key in plan if key[0] == "tasks_app"], plan
    with scratch_database() as connection:
        executor = migrate(connection, [leaf])
        applied = set(executor.loader.applied_migrations)
        assert SQUASHED in applied
        assert not {key for key in applied if key[0] != "agents_app"} - {
            key for key in plan if key[0] != "agents_app"
        }
        tables = set(connection.introspection.table_names())
        assert set(EVIDENCE_TABLES) <= tables
        assert not {t for t in tables if t.startswith("tasks_app_")}


@pytest.mark.django_db
def test_a_fresh_database_has_the_evidence_constraints_on_units() -> None:
    """The test database is a fresh one, made by today's migrations of every app."""
    assert unit_foreign_keys(connections["default"]) == {
        table: ["FOREIGN KEY (unit_id) REFERENCES tasks_app_unit(id) DEFERRABLE INITIALLY DEFERRED"]
        for table in EVIDENCE_TABLES
    }


def _old_rows(apps: Any, alias: str) -> dict[str, int]:
    """A project's session, plan, task and unit, with a trace event, a call and a decision."""

    def make(app: str, name: str, /, **fields: Any) -> Any:
        return apps.get_model(app, name).objects.using(alias).create(**fields)

    project = make("agents_app", "Project", name="upgrade", repo_path="/srv/upgrade")
    session = make("agents_app", "AgentSession", project=project, title="before")
    plan = make("tasks_app", "Plan", session=session, intent="keep the evidence")
    task = make("tasks_app", "Task", plan=plan, key="t1", title="one", position=1)
    unit = make("tasks_app", "Unit", task=task, attempt=1)
    event = make("agents_app", "TraceEvent", session=session, unit=unit, seq=1, kind="tool_call")
    call = make(
        "agents_app", "ModelCall", session=session, unit=unit, trace_event=event,
        stage="unit", model="m", cost=Decimal("0.25"),
    )  # fmt: skip
    decision = make(
        "agents_app", "RiskDecision", session=session, unit=unit, tool="bash",
        input_normalized={"cmd": "ls"}, input_hash="h", risk_class="read", decision="allow",
        rule="r", work_mode="build", run_control="manual", permission_profile="normal",
        model_mode="smart", surface="web",
    )  # fmt: skip
    return {"unit": unit.pk, "event": event.pk, "call": call.pk, "decision": decision.pk}


def _columns(connection: Any, sql: str, params: list[Any]) -> list[tuple[Any, ...]]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return list(cursor.fetchall())


@pytest.mark.slow  # two dozen migrations of two apps, on a database of its own
def test_a_database_made_by_the_old_migrations_upgrades_with_its_evidence(unblocked: None) -> None:
    with scratch_database() as connection:
        with override_settings(MIGRATION_MODULES=BEFORE):
            executor = migrate(connection, OLD_LEAVES)
            assert SQUASHED not in executor.loader.graph.nodes  # the old files, as then
            before = unit_foreign_keys(connection)
            apps = executor.loader.project_state(OLD_LEAVES).apps
            rows = _old_rows(apps, connection.alias)
        assert set(before) == set(EVIDENCE_TABLES)  # the old foreign keys

        executor = MigrationExecutor(connection)  # today's migrations
        assert SQUASHED in executor.loader.applied_migrations  # by ``replaces``
        plan = executor.migration_plan([CONSTRAINTS])
        assert [(m.app_label, m.name) for m, _ in plan] == [CONSTRAINTS]
        migrate(connection, [CONSTRAINTS])

        assert unit_foreign_keys(connection) == before  # kept as they were, not doubled
        evidence = _columns(
            connection,
            "SELECT e.unit_id, c.unit_id, c.trace_event_id, c.cost, d.unit_id"
            " FROM agents_app_traceevent e, agents_app_modelcall c, agents_app_riskdecision d"
            " WHERE e.id = %s AND c.id = %s AND d.id = %s",
            [rows["event"], rows["call"], rows["decision"]],
        )
        assert evidence == [
            (rows["unit"], rows["unit"], rows["event"], Decimal("0.250000"), rows["unit"])
        ]
        # The squashed migration is recorded, as Django does for a replaced chain.
        recorded = _columns(
            connection, "SELECT name FROM django_migrations WHERE app = %s", ["agents_app"]
        )
        assert (SQUASHED[1],) in recorded
