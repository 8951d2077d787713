"""The engine's side of the broker: send a task by name without ever failing the caller,
and tell whether messages were lost.

The database is the source of truth and the broker only carries ids (``dispatch``):
what a send could not deliver, the sweep sends again. So a send that meets the broker
down (a Redis restart) is logged and reported, never raised into the service that
just committed the state it announces — that service's work is done.

A message may also be lost after it was sent: a Redis restarted without persistence
loses its whole queue. Sending again whatever has waited long is not enough on its
own: with a deep queue (a thousand tasks, two workers) every waiting task looks lost
after a minute and would be sent again and again, each duplicate costing a worker a
claim. ``messages_lost`` asks the broker instead: it lost messages if it holds fewer
than there are tasks sent and not yet claimed.

Work already under way goes first: a merge, and a unit of a task that ran before (its
unit crashed, or it is retried) are sent with ``FIRST``, new units with ``NEW``, so a
task a fault interrupted runs again at once instead of behind the whole queue. On
Redis a priority is a list of its own, and a worker takes from the lowest number first.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from celery import current_app
from kombu.exceptions import ChannelError

from tasks_app.models import ScheduleStatus, TaskSchedule, TaskStatus

logger = logging.getLogger("sf.dispatch")
FIRST = 0  # Redis (kombu): 0 is taken first; also what a message without one gets
NEW = 3  # one of kombu's default priority steps for Redis (0, 3, 6, 9)


def send_by_name(name: str, *, args: list[Any], queue: str, priority: int = FIRST) -> bool:
    """Send the Celery task ``name``; False (logged) when the broker is unreachable."""
    try:
        current_app.send_task(name, args=args, queue=queue, priority=priority)
    except Exception as exc:  # kombu's OperationalError, redis' errors, a timeout, …
        logger.warning("could not send %s%s to the broker: %s", name, args, exc)
        return False
    return True


# A sweep dispatches every session in turn: the broker is asked once a second at most.
BACKLOG_FRESH_FOR = 1.0
_asked: dict[str, tuple[float, int | None]] = {}


def broker_backlog(queue: str) -> int | None:
    """How many messages wait in ``queue`` on the broker; None when it cannot tell."""
    now = time.monotonic()
    asked_at, count = _asked.get(queue, (-BACKLOG_FRESH_FOR, None))
    if now - asked_at < BACKLOG_FRESH_FOR:
        return count
    count = _ask(queue)
    _asked[queue] = (now, count)
    return count


def _ask(queue: str) -> int | None:
    try:
        with current_app.connection_for_read() as connection:
            channel = connection.default_channel
            _name, count, _consumers = channel.queue_declare(queue=queue, passive=True)
    except ChannelError:
        return 0  # no such queue: Redis drops an empty list, and a restart drops them all
    except Exception as exc:
        logger.warning("could not ask the broker about %s: %s", queue, exc)
        return None
    return int(count)


def messages_lost(queue: str) -> bool:
    """Whether the broker holds fewer messages than tasks sent and not yet claimed (or
    cannot say): then what has waited long must be sent again. Other messages in the
    queue (merges, plans) can only hide a loss for as long as they wait, never invent
    one."""
    sent = TaskSchedule.objects.filter(
        status=ScheduleStatus.DUE,
        enqueued_at__isnull=False,
        task__status__in=(TaskStatus.TODO, TaskStatus.RETRYING),
    ).count()
    held = broker_backlog(queue)
    return held is None or held < sent
