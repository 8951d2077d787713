"""The Celery app. Workers run agent units; the web process only enqueues.

How acks, redelivery and time limits fit together (one decision, made here)
--------------------------------------------------------------------------
An agent unit may run for up to ``SF_UNIT_HARD_TIMEOUT`` (one hour by default).

* ``task_acks_late`` + ``task_reject_on_worker_lost``: the message is acked only
  when the unit function returns. If the pool process running it dies (OOM,
  ``kill -9`` of the child) the message is rejected and requeued at once, so the unit
  is retried instead of silently lost.
* ``visibility_timeout`` is *longer* than the hard time limit. Redis redelivers an
  un-acked message after the visibility timeout even while the first worker is
  still running it (celery #7918); with the timeout above the hard limit that can
  only happen after the first run is over. If the whole worker host dies the
  message comes back after this timeout at the latest.
* We do not wait for the broker to notice a dead worker: the database is the source
  of truth. Every unit step starts by *claiming its row* with a conditional update,
  and a unit whose worker heartbeat went stale is reset and dispatched again by the
  engine. A late duplicate delivery then finds its claim taken and returns at
  once, so each step is idempotent and nothing is merged twice.
* ``task_time_limit`` (hard, kills the pool process) sits a margin above the
  engine's own hard timeout, which stops a unit cleanly and records it. Celery's
  limit is only the backstop for a unit that stopped responding altogether.
* ``worker_prefetch_multiplier = 1``: a worker reserves one unit at a time, so a
  long unit never holds a second one hostage while other workers are idle.
* JSON only: tasks take primary keys, never pickled objects.
"""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

from celery import Celery
from django.conf import settings

from sf_core.env import env_file_load_checkout
from sf_web.startup import settings_or_exit

# `celery -A sf_web worker` starts here: read the checkout's .sf/env before settings.
with settings_or_exit():
    env_file_load_checkout(Path(__file__).resolve().parent.parent)
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "sf_web.settings")

app = Celery("sf_web")
app.config_from_object("django.conf:settings", namespace="CELERY")

_HARD_LIMIT_MARGIN = timedelta(minutes=5)
_VISIBILITY_MARGIN = timedelta(minutes=30)


def _configure(application: Celery) -> None:
    hard_limit = settings.SF_UNIT_HARD_TIMEOUT + _HARD_LIMIT_MARGIN
    application.conf.update(
        task_serializer="json",
        result_serializer="json",
        accept_content=["json"],
        task_ignore_result=True,
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        task_time_limit=int(hard_limit.total_seconds()),
        broker_transport_options={
            "visibility_timeout": int((hard_limit + _VISIBILITY_MARGIN).total_seconds()),
        },
        broker_connection_retry_on_startup=True,
        # Keep running units when the broker connection drops (a Redis restart):
        # their results are written to the database, not the broker.
        worker_cancel_long_running_tasks_on_connection_loss=False,
        worker_hijack_root_logger=False,
        worker_send_task_events=False,
    )


# Every entry point imports this first (sf_web/__init__.py): the settings are read here.
with settings_or_exit():
    _configure(app)
app.autodiscover_tasks()
