"""The engine's side of ``sf_core.signals``: connected once, in ``TasksAppConfig.ready``.

Only layers below the engine announce ``session_runnable`` (plan acceptance, the
command service); the engine itself calls ``dispatch.dispatch_on_commit``.
"""

from __future__ import annotations

from sf_core.signals import decision_reviewed, session_runnable
from tasks_app.engine import extensions
from tasks_app.engine.decisions import on_decision_reviewed
from tasks_app.engine.dispatch import on_session_runnable
from tasks_app.engine.drain import drain_in_background


def connect() -> None:
    """Connect the receivers (``dispatch_uid``: a second ``ready`` adds nothing) and plug
    the inline driver into dispatch."""
    session_runnable.connect(on_session_runnable, dispatch_uid="tasks_app.engine.dispatch")
    decision_reviewed.connect(on_decision_reviewed, dispatch_uid="tasks_app.engine.decisions")
    extensions.inline_drain.register("drain", drain_in_background)
