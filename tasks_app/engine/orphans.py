"""Tasks a fault left between two steps: the sweep moves them on.

A unit's end is several transactions (the unit's status, then its task's moves, then
the review and the merge queue's entry), so a fault between two of them — the database
connection terminated, the worker killed — can leave a task no unit will ever move:

* in progress or verifying with no unit running (its unit's end was recorded, the
  task's next move was not): it runs again, no retry spent;
* in review, approved automatically by its profile, with no merge queue entry (the
  approval was not recorded): it is approved again.

Each is a conditional move under the task's schedule row lock (the lock a unit's claim
takes), so a sweep never races a unit starting, and two sweeps cannot both act.
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.db import transaction
from django.db.models import Max, QuerySet
from django.utils import timezone

from agents_app.models import SessionDriver
from sf_core.actors import Actor
from sf_core.errors import InvalidTransition
from tasks_app.engine.dispatch import dispatch_on_commit
from tasks_app.engine.review import AUTO_APPROVE_PROFILES, AUTO_APPROVE_RISKS, task_approve
from tasks_app.lifecycle import task_transition
from tasks_app.models import (
    ACTIVE_MERGE_STATUSES,
    ScheduleStatus,
    Task,
    TaskSchedule,
    TaskStatus,
    UnitStatus,
)

logger = logging.getLogger("sf.dispatch")
SWEEP = Actor.system("sweep")
UNIT_GONE = (TaskStatus.IN_PROGRESS, TaskStatus.VERIFYING)


def orphans_recover() -> int:
    """Move on every task a fault left between two steps; returns how many."""
    left, unapproved = orphans_found()
    moved = sum(_run_again(task.pk) for task in left)
    return moved + sum(_approve_again(task.pk) for task in unapproved)


def orphans_found() -> tuple[QuerySet[Task], QuerySet[Task]]:
    """The tasks left between two steps: (to run again, to approve again). The
    doctor counts them with the same queries (``tasks.stuck``)."""
    cutoff = timezone.now() - settings.SF_WORKER_STALE_AFTER
    workers = Task.objects.filter(plan__session__driver=SessionDriver.WORKERS)
    left = (
        workers.filter(status__in=UNIT_GONE, runtime__isnull=True)
        .exclude(units__status=UnitStatus.RUNNING)
        .annotate(ended=Max("units__finished_at"))
        .filter(ended__lt=cutoff)
    )
    unapproved = (
        workers.filter(
            status=TaskStatus.REVIEW,
            risk_level__in=AUTO_APPROVE_RISKS,
            plan__session__permission_profile__in=AUTO_APPROVE_PROFILES,
        )
        .exclude(merge_requests__status__in=ACTIVE_MERGE_STATUSES)
        .annotate(entered=Max("transitions__created_at"))
        .filter(entered__lt=cutoff)
    )
    return left, unapproved


def _run_again(task_id: int) -> bool:
    with transaction.atomic():
        TaskSchedule.objects.select_for_update().filter(task_id=task_id).first()
        task = Task.objects.select_related("plan").get(pk=task_id)
        if task.status not in UNIT_GONE or task.units.filter(status=UnitStatus.RUNNING).exists():
            return False
        left = task.status
        reason = "its last unit ended without moving it on (a fault in between); running again"
        task_transition(task=task, to=TaskStatus.RETRYING, reason=reason, actor=SWEEP)
        TaskSchedule.objects.filter(task=task).update(
            status=ScheduleStatus.DUE, due_at=timezone.now(), claimed_by="", enqueued_at=None
        )
        dispatch_on_commit(task.plan.session_id)
    logger.warning("task %s: left %s by a fault; running again", task.key, left)
    return True


def _approve_again(task_id: int) -> bool:
    task = Task.objects.select_related("plan").get(pk=task_id)
    try:
        task_approve(task=task, actor=Actor.system("auto (recovered)"))
    except InvalidTransition:  # moved on meanwhile
        return False
    logger.warning("task %s: its automatic approval was lost; approved again", task.key)
    return True
