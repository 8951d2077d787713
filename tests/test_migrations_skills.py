"""skills_app's migrations stand alone, and a database made by the old one upgrades intact.

Until skills_app 0002_skills_stand_alone, its 0001_skills made ``SkillUse.unit`` and
``SkillProposal.task`` foreign keys to tasks_app and depended on tasks_app's migrations.
The old file is kept in tests/upgrade/migrations/skills_app_before, so that a scratch
database can be brought to exactly the state a database at that time had, filled, and
upgraded with the code of today (as tests/test_migrations_standalone.py does for
agents_app, whose helpers these tests use).
"""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connections
from django.db.migrations.executor import MigrationExecutor
from django.db.migrations.loader import MigrationLoader
from django.test import override_settings

from tests.test_migrations_standalone import leaves, migrate, scratch_database
from tests.test_migrations_standalone import unblocked as unblocked  # the fixture

BEFORE = {"skills_app": "tests.upgrade.migrations.skills_app_before"}
REPLACING = ("skills_app", "0002_skills_stand_alone")
CONSTRAINTS = ("tasks_app", "0018_skill_links_constraints")
OLD_LEAVES = [("skills_app", "0001_skills"), ("tasks_app", "0017_plan_lint_rejected_by")]
# (table, column) → the table it references
LINKS = {
    ("skills_app_skilluse", "unit_id"): "tasks_app_unit",
    ("skills_app_skillproposal", "task_id"): "tasks_app_task",
}


def link_foreign_keys(connection: Any) -> dict[tuple[str, str], list[str]]:
    """Per skills_app link column, its foreign key constraints, as SQL."""
    found: dict[tuple[str, str], list[str]] = {}
    with connection.cursor() as cursor:
        for table, column in LINKS:
            cursor.execute(
                "SELECT pg_get_constraintdef(c.oid) FROM pg_constraint c"
                " JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = ANY(c.conkey)"
                " WHERE c.contype = 'f' AND c.conrelid = %s::regclass AND a.attname = %s",
                [table, column],
            )
            found[(table, column)] = [row[0] for row in cursor.fetchall()]
    return found


def expected_keys() -> dict[tuple[str, str], list[str]]:
    return {
        (table, column): [
            f"FOREIGN KEY ({column}) REFERENCES {target}(id) DEFERRABLE INITIALLY DEFERRED"
        ]
        for (table, column), target in LINKS.items()
    }


def test_skills_app_migrates_alone_on_an_empty_database(unblocked: None) -> None:
    loader = MigrationLoader(None, ignore_no_migrations=True)
    leaf = max(key for key in leaves(loader) if key[0] == "skills_app")
    plan = loader.graph.forwards_plan(leaf)
    assert REPLACING in plan
    assert not [key for key in plan if key[0] == "tasks_app"], plan
    with scratch_database() as connection:
        migrate(connection, [leaf])
        tables = set(connection.introspection.table_names())
        assert {"skills_app_skilluse", "skills_app_skillproposal"} <= tables
        assert not {t for t in tables if t.startswith("tasks_app_")}
        assert link_foreign_keys(connection) == {key: [] for key in LINKS}


@pytest.mark.django_db
def test_a_fresh_database_has_the_link_constraints() -> None:
    """The test database is a fresh one, made by today's migrations of every app."""
    assert link_foreign_keys(connections["default"]) == expected_keys()


def _old_rows(apps: Any, alias: str) -> dict[str, int]:
    """A unit that used a skill, and a proposal a task writes, in the old schema."""

    def make(app: str, name: str, /, **fields: Any) -> Any:
        return apps.get_model(app, name).objects.using(alias).create(**fields)

    project = make("agents_app", "Project", name="upgrade", repo_path="/srv/upgrade")
    session = make("agents_app", "AgentSession", project=project, title="before")
    plan = make("tasks_app", "Plan", session=session, intent="keep the links")
    task = make("tasks_app", "Task", plan=plan, key="t1", title="one", position=1)
    unit = make("tasks_app", "Unit", task=task, attempt=1)
    skill = make(
        "skills_app", "Skill", scope="project", project=project, name="lint",
        source_path=".agents/skills/lint/SKILL.md", content_hash="h",
    )  # fmt: skip
    use = make("skills_app", "SkillUse", skill=skill, session=session, unit=unit, kind="load")
    proposal = make(
        "skills_app", "SkillProposal", project=project, name="fix-lint", description="d",
        kind="same-fix", fingerprint="f", skill_md="---", task=task,
    )  # fmt: skip
    return {"unit": unit.pk, "task": task.pk, "use": use.pk, "proposal": proposal.pk}


@pytest.mark.slow  # every app's migrations, on a database of its own
def test_a_database_made_by_the_old_migration_upgrades_with_its_links(unblocked: None) -> None:
    with scratch_database() as connection:
        with override_settings(MIGRATION_MODULES=BEFORE):
            executor = migrate(connection, OLD_LEAVES)
            assert REPLACING not in executor.loader.graph.nodes  # the old file, as then
            before = link_foreign_keys(connection)
            rows = _old_rows(executor.loader.project_state(OLD_LEAVES).apps, connection.alias)
        assert before == {
            key: [definition] for key, [definition] in expected_keys().items()
        }  # the old foreign keys, one each

        executor = MigrationExecutor(connection)  # today's migrations
        assert REPLACING in executor.loader.applied_migrations  # by ``replaces``
        plan = executor.migration_plan([CONSTRAINTS])
        assert [(m.app_label, m.name) for m, _ in plan] == [CONSTRAINTS]
        executor = migrate(connection, leaves(executor.loader))  # the rest of today's apps
        assert CONSTRAINTS in executor.loader.applied_migrations

        assert link_foreign_keys(connection) == before  # kept as they were, not doubled
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT u.unit_id, p.task_id FROM skills_app_skilluse u, skills_app_skillproposal p"
                " WHERE u.id = %s AND p.id = %s",
                [rows["use"], rows["proposal"]],
            )
            assert cursor.fetchall() == [(rows["unit"], rows["task"])]
        _relations_work(connection.alias, rows)


def _relations_work(alias: str, rows: dict[str, int]) -> None:
    """Today's models follow the relations tasks_app holds, on the upgraded tables, and
    deleting does what the old foreign keys did."""
    from skills_app.models import SkillProposal, SkillUse
    from tasks_app.models import Task, Unit

    use = SkillUse.objects.using(alias).select_related("unit__task").get(pk=rows["use"])
    assert (use.unit.pk, use.unit.task.key) == (rows["unit"], "t1")
    proposal = SkillProposal.objects.using(alias).get(task__key="t1")
    assert proposal.pk == rows["proposal"]
    Unit.objects.using(alias).filter(pk=rows["unit"]).delete()
    assert not SkillUse.objects.using(alias).filter(pk=rows["use"]).exists()  # cascaded
    Task.objects.using(alias).filter(pk=rows["task"]).delete()
    assert SkillProposal.objects.using(alias).get(pk=rows["proposal"]).task_id is None
