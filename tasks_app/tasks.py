"""Celery interfaces of the tasks app: take ids, call one service, return.

Celery finds this module by autodiscovery (``tasks_app.tasks``). Nothing imports it to
send a task: the engine sends by the registered names below, which stay stable.
"""

from __future__ import annotations

from celery import shared_task

from agents_app.models import AgentSession
from tasks_app.engine.dispatch import dispatch
from tasks_app.engine.merge_queue import merge_queue_run
from tasks_app.engine.unit import unit_run
from tasks_app.engine.workers import worker_probe_answer
from tasks_app.intake import plan_request_run


@shared_task(bind=True, name="tasks_app.worker_probe")
def worker_probe_task(self, probe_id: int) -> bool:  # type: ignore[no-untyped-def]
    return worker_probe_answer(probe_id=probe_id, hostname=self.request.hostname or "inline")


@shared_task(bind=True, name="tasks_app.unit_run")
def unit_run_task(self, task_id: int) -> str:  # type: ignore[no-untyped-def]
    """Run one unit of ``task_id`` on this worker. A delivery that loses the claim
    (a duplicate, or a late redelivery after recovery) returns without doing anything."""
    report = unit_run(task_id=task_id, worker=self.request.hostname or "worker")
    return "skipped" if report is None else report.outcome


@shared_task(name="tasks_app.session_dispatch")
def session_dispatch_task(session_id: int) -> int:
    """Dispatch a session on a worker, for a request that does not wait for the answer
    (``engine.dispatch.on_session_runnable``); returns how many units were sent."""
    try:
        return len(dispatch(session_id=session_id))
    except AgentSession.DoesNotExist:  # deleted since the command: nothing to run
        return 0


@shared_task(name="tasks_app.plan_request_run")
def plan_request_run_task(request_id: int) -> str:
    """Plan one intent from the web (``tasks_app.intake``); returns how it ended."""
    return plan_request_run(request_id=request_id).status


@shared_task(name="tasks_app.merge_queue_run")
def merge_queue_run_task(project_id: int) -> int:
    """Merge the project's queued approvals, each verified on the merged tree
    (``tasks_app.engine.merge_queue``); returns how many were processed."""
    return merge_queue_run(project_id=project_id)
