"""Database helpers shared by the apps."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.conf import settings
from django.db import connection, transaction


@contextmanager
def relaxed_commit() -> Iterator[None]:
    """A transaction for a unit's high-rate evidence rows (trace events, risk decisions,
    the session's activity) whose commit does not wait for the WAL to reach the disk.

    Each tool call used to pay four to six synchronous commits, each a WAL flush
    (``fsync``): 4-8 ms apiece on a busy disk, most of a tool call's overhead. With
    PostgreSQL's asynchronous commit (``SET LOCAL synchronous_commit = off``) the rows
    are committed all the same — visible to every other connection at once, kept if the
    worker dies — and written to disk within three ``wal_writer_delay`` (600 ms by
    default) or at the next ordinary commit, whichever comes first (every task
    transition is one). Only a crash of the database server itself in that window loses
    them, and then whole transactions, never part of one (PostgreSQL's documentation,
    "Asynchronous Commit"). ``SF_TRACE_SYNCHRONOUS_COMMIT=1`` waits for the flush.

    Inside a transaction already open this is a plain nested block without a savepoint
    (the outer commit decides, and ``SET LOCAL`` would relax the outer one too).
    """
    if connection.in_atomic_block:
        with transaction.atomic(savepoint=False):
            yield
        return
    with transaction.atomic():
        if connection.vendor == "postgresql" and not settings.SF_TRACE_SYNCHRONOUS_COMMIT:
            with connection.cursor() as cursor:
                cursor.execute("SET LOCAL synchronous_commit TO OFF")
        yield
