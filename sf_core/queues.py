"""The Celery queues SF sends work to, one per kind of work, and who serves them.

Agent units run for minutes to an hour; everything else is short or is something a
person waits on. On one queue a notification waited 5.5 minutes behind two units
holding both worker slots (issue [6/8]), so each kind has a queue of its own, named
after the checkout's queue (``SF_CELERY_QUEUE``, read at send time: tests point it at
their worker), and ``scripts/run.sh`` and ``compose.yaml`` start a worker for each:

* ``<queue>``: agent units (``tasks_app.unit_run``).
* ``<queue>.short``: planning an intent, the merge queue, a session's dispatch — work a
  person is waiting for, minutes at most; never behind a unit.
* ``<queue>.notify``: notification deliveries, seconds each; never behind a plan or a
  merge either.

Sweeps need no queue: every worker's heartbeat thread runs them, beside its slots.
A worker that serves the units queue serves the others too (``-Q`` of all three): its
free slots take short work, and a deployment with one worker still does everything.
"""

from __future__ import annotations

from enum import StrEnum

from django.conf import settings


class WorkKind(StrEnum):
    UNITS = "units"
    SHORT = "short"
    NOTIFY = "notify"


def queue_for(kind: WorkKind, base: str | None = None) -> str:
    """The queue ``kind`` of work is sent to, now (or for the checkout queue ``base``)."""
    base = str(settings.CELERY_TASK_DEFAULT_QUEUE) if base is None else base
    return base if kind == WorkKind.UNITS else f"{base}.{kind}"


def queues_served(base: str) -> str:
    """Celery's ``-Q`` for a worker that does every kind of work of the queue ``base``."""
    return ",".join(queue_for(kind, base) for kind in WorkKind)


def queues_all() -> list[str]:
    """Every queue SF sends to, units first (what the dashboard counts)."""
    return [queue_for(kind) for kind in WorkKind]
