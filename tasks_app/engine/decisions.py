"""What a reviewed risk decision means for the task that was waiting on it.

``agents_app.gate.approvals`` settles the decision and sends ``decision_reviewed``; this
receiver (connected in ``TasksAppConfig.ready``) unblocks or explains the task.
"""

from __future__ import annotations

from typing import Any

from agents_app.models import RiskDecision
from sf_core.actors import Actor
from sf_core.live import broadcast
from tasks_app.engine.dispatch import dispatch_on_commit
from tasks_app.lifecycle import task_groups, task_transition
from tasks_app.models import HoldReason, TaskStatus, Unit
from tasks_app.services import schedule_ready


def task_after_review(*, decision_id: int, approved: bool) -> None:
    """Approved: the blocked task runs again (its next unit can make the approved
    call). Rejected: it stays blocked, with the rejection as its reason."""
    decision = RiskDecision.objects.get(pk=decision_id)
    if decision.unit_id is None:
        return
    unit = Unit.objects.select_related("task__plan").get(pk=decision.unit_id)
    task = unit.task
    if task.status != TaskStatus.BLOCKED:
        return
    if approved:
        task_transition(
            task=task,
            to=TaskStatus.TODO,
            reason=f"decision {decision_id} approved",
            actor=Actor.system("review"),
        )
        schedule_ready(plan=task.plan)
        dispatch_on_commit(task.plan.session_id)
    else:
        note = f": {decision.review_note}" if decision.review_note else ""
        task.status_reason = f"decision {decision_id} rejected{note}"
        task.hold_reason = HoldReason.DECISION_REJECTED
        task.save(update_fields=["status_reason", "hold_reason"])
        for group in task_groups(task):  # the board's next action says it was rejected
            broadcast(group, "tasks.changed", task_id=task.pk)


def on_decision_reviewed(sender: object, *, decision_id: int, approved: bool, **_: Any) -> None:
    """The ``decision_reviewed`` receiver."""
    task_after_review(decision_id=decision_id, approved=approved)
