from typing import Any

from django.apps import AppConfig


class AgentsAppConfig(AppConfig):
    name = "agents_app"
    verbose_name = "Agents"

    def ready(self) -> None:
        from agents_app.gate.approvals import decision_settled

        # The receiver belongs to tasks_app (the app built on this one); it is connected
        # here until TasksAppConfig.ready() connects it, so the gate itself never
        # imports tasks_app.
        decision_settled.connect(_resume_task, dispatch_uid="agents_app.resume_task")


def _resume_task(sender: object, *, decision_id: int, approved: bool, **kwargs: Any) -> None:
    """Hand the waiting task back to the engine (tasks_app builds on this app)."""
    from tasks_app.approvals import task_after_review

    task_after_review(decision_id=decision_id, approved=approved)
