"""Database helpers shared by the apps."""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import psycopg
from django.conf import settings
from django.db import connection, transaction
from django.db.models import Field, Model, QuerySet

# In a statement's RETURNING: its own implicit transaction commits without waiting for
# the disk (``relaxed_commit`` says what that keeps and what it risks).
RELAXED = "set_config('synchronous_commit', 'off', true)"


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


def relaxed_update(queryset: QuerySet[Any], **values: Any) -> int:
    """``queryset.update(**values)`` committed at once without waiting for the disk, in
    one round trip (``relaxed_insert`` says why); how many rows it changed."""
    if (
        connection.vendor != "postgresql"
        or connection.in_atomic_block
        or settings.SF_TRACE_SYNCHRONOUS_COMMIT
    ):
        with relaxed_commit():
            return queryset.update(**values)
    with connection.execute_wrapper(_relaxed_returning):
        return queryset.update(**values)


def _relaxed_returning(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
    """The statement's own (implicit) transaction commits without waiting for the disk:
    ``set_config`` in its ``RETURNING`` runs before that commit."""
    return execute(f"{sql} RETURNING {RELAXED}", params, many, context)


def relaxed_insert(
    obj: Model,
    *,
    prefix: str = "",
    prefix_params: Sequence[Any] = (),
    condition: str = "",
    condition_params: Sequence[Any] = (),
) -> bool:
    """Insert ``obj`` (its primary key set) in one statement that commits at once without
    waiting for the disk, as ``relaxed_commit`` does: one round trip to PostgreSQL where
    ``relaxed_commit`` and ``save()`` take four (``BEGIN``, ``SET LOCAL``, the insert,
    ``COMMIT``), which on a loaded machine were most of a tool call's cost.

    ``condition``: SQL that must hold for the row to be inserted (False returned, nothing
    written, otherwise); ``prefix``: a ``WITH`` clause before the insert (a data-modifying
    one runs in the same statement and commits with it); each with its parameters.
    Inside a transaction already open the statement is part of it (the outer commit
    decides); on another database than PostgreSQL, with no ``condition``, it is a plain
    ``save()``.
    """
    if connection.vendor != "postgresql":
        if condition or prefix:
            raise NotImplementedError("a conditional insert needs PostgreSQL")
        obj.save(force_insert=True)
        return True
    values = _insert_values(obj)
    relaxed = not connection.in_atomic_block and not settings.SF_TRACE_SYNCHRONOUS_COMMIT
    sql = _insert_sql(type(obj), relaxed)
    if condition:
        sql = sql.replace(" RETURNING ", f" WHERE {condition} RETURNING ", 1)
    with _prepared_cursor() as cursor:
        cursor.execute(f"{prefix} {sql}", [*prefix_params, *values, *condition_params])
        row = cursor.fetchone()
    if row is None:
        return False
    obj.pk = row[0]
    obj._state.adding = False
    return True


class _PreparingCursor(psycopg.Cursor[Any]):
    """A psycopg cursor binding on the server that prepares each statement the first
    time: planning the dispatch point's statement took 0.9 ms, more than running it."""

    def execute(self, query: Any, params: Any = None, **options: Any) -> Any:
        options.setdefault("prepare", True)
        return super().execute(query, params, **options)


@contextmanager
def _prepared_cursor() -> Iterator[Any]:
    """Django's cursor (its wrappers: query logging, ``execute_wrapper``) over a
    ``_PreparingCursor``; Django's own when the connection prepares nothing
    (``prepare_threshold`` None: a transaction pooler in between)."""
    connection.ensure_connection()
    raw = connection.connection
    if raw is None or connection.settings_dict["OPTIONS"].get("prepare_threshold", 0) is None:
        with connection.cursor() as cursor:
            yield cursor
        return
    connection.validate_thread_sharing()
    prepared: Any = _PreparingCursor(raw)  # the stubs say a wrapper; Django wraps it
    if connection.queries_logged:
        cursor = connection.make_debug_cursor(prepared)
    else:
        cursor = connection.make_cursor(prepared)
    with cursor:
        yield cursor


def _insert_values(obj: Model) -> list[Any]:
    """The row's values as ``save()`` prepares them (defaults, ``auto_now``, JSON)."""
    return [
        field.get_db_prep_save(field.pre_save(obj, True), connection)
        for field in _insert_fields(type(obj))
    ]


@functools.cache
def _insert_fields(model: type[Model]) -> tuple[Field[Any, Any], ...]:
    return tuple(f for f in model._meta.concrete_fields if not f.primary_key)


@functools.cache
def _insert_sql(model: type[Model], relaxed: bool) -> str:
    """``INSERT … SELECT`` of one row: a ``SELECT`` may have a ``WHERE``. Each value is
    cast to its column's type (a bare ``NULL`` or string would be ``text``)."""
    fields = _insert_fields(model)
    quote = connection.ops.quote_name
    columns = ", ".join(quote(str(f.column)) for f in fields)
    values = ", ".join(f"%s::{f.db_type(connection)}" for f in fields)
    returning = quote(str(model._meta.pk and model._meta.pk.column))
    if relaxed:
        returning += f", {RELAXED}"
    return (
        f"INSERT INTO {quote(model._meta.db_table)} ({columns}) SELECT {values}"
        f" RETURNING {returning}"
    )
