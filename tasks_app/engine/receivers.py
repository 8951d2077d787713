"""The engine's side of ``sf_core.signals``: connected once, in ``TasksAppConfig.ready``."""

from __future__ import annotations

from sf_core.signals import decision_reviewed, session_runnable
from tasks_app.engine.decisions import on_decision_reviewed
from tasks_app.engine.dispatch import on_session_runnable


def connect() -> None:
    """Connect the receivers (``dispatch_uid``: a second ``ready`` adds nothing)."""
    session_runnable.connect(on_session_runnable, dispatch_uid="tasks_app.engine.dispatch")
    decision_reviewed.connect(on_decision_reviewed, dispatch_uid="tasks_app.engine.decisions")
