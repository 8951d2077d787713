"""Announcements between apps: a state change says what happened; whoever cares listens.

The base app (``agents_app``) and the services of ``tasks_app`` never call the engine
built on them. They send one of these signals, and the engine connects its receivers
in ``TasksAppConfig.ready``. This keeps the dependency direction one way — the layer
below announces, the layer above acts — the way ``agents_app/runtime/loop.py`` depends
on Protocols instead of the app above it.

``send_on_commit`` is the twin of ``sf_core.live.broadcast``: a receiver must see the
committed state, never a write that may still roll back. It is called inside the
transaction that makes the change, and refuses to be called outside one (there
would be no commit to wait for: the receivers would run in the middle of the caller).

Inside ``tasks_app`` the engine does not signal itself: it calls its own dispatch
(``tasks_app.engine.dispatch.dispatch_on_commit``). Signals are for telling a layer
above.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.dispatch import Signal

# The session may have work to run now: a plan was accepted (tasks_app's services), a
# command resumed it (agents_app's command service). Arguments: session_id (int);
# to_workers (bool, default False): the sender does not wait for the dispatch, which
# goes to a worker when there is one (a command typed in a page or sent to the API).
session_runnable = Signal()

# A person (or a pre-supplied answer) reviewed a pending risk decision.
# Arguments: decision_id (int), approved (bool).
decision_reviewed = Signal()

# The session report (/status, /tasks, /session-report) is being built; a receiver
# returns a dict of extra fields to merge into it. Arguments: session (AgentSession).
session_report_requested = Signal()

# A person typed /skills or /skill NAME [args]; the skills app answers. Arguments:
# session (AgentSession), name (str: "" lists), args (str), actor (Actor). A receiver
# returns {"message": str, "data": dict} or raises CommandRejected.
skill_command_requested = Signal()

# /doctor heal: a person asks for a repair unit on the session, with the doctor's
# report as its brief. Arguments: session, report (sf_core.doctor.DoctorReport), actor.
# Answered by tasks_app.features.doctor.heal (the engine, above the command service) with a dict:
# {"message": str, "data": {...}}, or raises CommandRejected (nothing to heal).
doctor_heal_requested = Signal()

# A worker's heartbeat thread swept the engine (every ``SF_SWEEP_INTERVAL``); other
# apps recover what they own the same way (the notification outbox) or run what is due
# (recurring schedules). No arguments.
# Sent outside any transaction; receivers are called with ``send_robust``.
sweep_due = Signal()


class NoTransaction(RuntimeError):
    """``send_on_commit`` was called outside a transaction."""


def send_on_commit(signal: Signal, *, sender: object, **arguments: Any) -> None:
    """Send ``signal`` once the current transaction commits.

    Receivers run in the sender's process and thread, after the commit: their errors
    propagate as they would from a direct call, but never undo the sender's write.
    Called outside a transaction it raises ``NoTransaction`` and sends nothing: call it
    inside the ``atomic()`` block that makes the change it announces.
    """
    if not transaction.get_connection().in_atomic_block:
        raise NoTransaction(
            f"send_on_commit({_name(signal)}) outside a transaction: call it inside the "
            "atomic() block that makes the change it announces"
        )
    transaction.on_commit(lambda: signal.send(sender=sender, **arguments))


def _name(signal: Signal) -> str:
    """The name ``signal`` has in this module, for messages."""
    found = [name for name, value in globals().items() if value is signal]
    return found[0] if found else repr(signal)


def collect(signal: Signal, *, sender: object, **arguments: Any) -> dict[str, Any]:
    """Send ``signal`` now and merge the dicts its receivers return (later ones win)."""
    merged: dict[str, Any] = {}
    for _receiver, response in signal.send(sender=sender, **arguments):
        if isinstance(response, dict):
            merged.update(response)
    return merged
