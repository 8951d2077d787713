"""relaxed_commit: asynchronous commit for its own transaction only, never an outer one."""

from __future__ import annotations

import pytest
from django.db import connection, transaction

from sf_core.db import relaxed_commit

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
