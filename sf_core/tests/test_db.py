"""relaxed_commit: asynchronous commit for its own transaction only, never an outer one;
relaxed_insert and relaxed_update: the same in one statement."""

from __future__ import annotations

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from agents_app.models import Project
from sf_core.db import relaxed_commit, relaxed_insert, relaxed_update

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="a PostgreSQL setting"),
]


def synchronous_commit() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SHOW synchronous_commit")
        return str(cursor.fetchone()[0])


def test_its_transaction_commits_without_waiting_for_the_disk() -> None:
    with relaxed_commit():
        assert connection.in_atomic_block
        assert synchronous_commit() == "off"
    assert synchronous_commit() == "on"  # SET LOCAL ended with the transaction


def test_inside_a_transaction_it_leaves_the_outer_commit_as_it_is() -> None:
    with transaction.atomic():
        with relaxed_commit():
            assert synchronous_commit() == "on"
        assert synchronous_commit() == "on"


def test_the_setting_makes_it_wait_for_the_disk(settings: object) -> None:
    settings.SF_TRACE_SYNCHRONOUS_COMMIT = True  # type: ignore[attr-defined]
    with relaxed_commit():
        assert synchronous_commit() == "on"


def seen_by_another_connection(sql: str, *params: object) -> object:
    """What a new connection reads: only committed rows."""
    import psycopg

    settings = connection.settings_dict
    with psycopg.connect(
        host=settings["HOST"],
        port=settings["PORT"] or None,
        dbname=settings["NAME"],
        user=settings["USER"],
        password=settings["PASSWORD"],
    ) as other:
        row = other.execute(sql, params).fetchone()
        return row[0] if row else None


def test_an_insert_is_one_statement_committed_as_save_would_write_it() -> None:
    project = Project(name="relaxed", repo_path="/tmp/r", policy={"deny": [{"tool": "x"}]})
    with CaptureQueriesContext(connection) as queries:
        assert relaxed_insert(project)
    assert len(queries) == 1, "no BEGIN, SET LOCAL or COMMIT of its own"
    assert project.pk is not None
    stored = Project.objects.get(pk=project.pk)
    assert (stored.name, stored.base_branch, stored.policy) == (
        "relaxed",
        "main",
        {"deny": [{"tool": "x"}]},
    ), "defaults and JSON as save() writes them"
    assert stored.created_at is not None
    sql = "SELECT name FROM agents_app_project WHERE id = %s"
    assert seen_by_another_connection(sql, project.pk) == "relaxed", "committed"
    assert synchronous_commit() == "on", "only its own commit was relaxed"


def test_a_condition_that_does_not_hold_inserts_nothing() -> None:
    project = Project(name="never", repo_path="/tmp/r")
    assert not relaxed_insert(project, condition="%s = 1", condition_params=[2])
    assert project.pk is None
    assert not Project.objects.filter(name="never").exists()
    assert relaxed_insert(project, condition="%s = 1", condition_params=[1])


def test_inside_a_transaction_the_insert_is_the_transactions() -> None:
    with transaction.atomic():
        relaxed_insert(Project(name="undone", repo_path="/tmp/r"))
        transaction.set_rollback(True)
    assert not Project.objects.filter(name="undone").exists()


def test_an_update_is_one_statement_and_says_how_many_rows() -> None:
    Project.objects.create(name="a", repo_path="/tmp/a")
    with CaptureQueriesContext(connection) as queries:
        changed = relaxed_update(Project.objects.filter(name="a"), repo_path="/tmp/b")
    assert (changed, len(queries)) == (1, 1)
    sql = "SELECT repo_path FROM agents_app_project WHERE name = %s"
    assert seen_by_another_connection(sql, "a") == "/tmp/b"
    assert relaxed_update(Project.objects.filter(name="missing"), repo_path="/x") == 0
