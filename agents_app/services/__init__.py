"""Services of the base app: functions that write (DESIGN §2; HackSoft's services).

``sessions``: projects, sessions and their mode transitions — every change of an axis
writes one ``ModeTransition`` in the same transaction. ``runs``: run control at unit
boundaries (``/next``, the pause after a unit) and superseded steering. ``commands``: a parsed slash
command (``agents_app.commands``, the one grammar of every surface) applied to a session.
Import from here; the split is for reading, not for callers.
"""

from agents_app.services.commands import (
    CommandOutcome,
    command_apply,
    command_run,
)
from agents_app.services.dispatch_points import DispatchPoint, session_has_due, session_read
from agents_app.services.members import member_add, member_remove, member_set_role
from agents_app.services.projects import project_create, project_name_check
from agents_app.services.runs import session_step, session_unit_ended, steering_supersede
from agents_app.services.sessions import (
    RepairOutcome,
    repair_target,
    session_apply_due,
    session_change_mode,
    session_create,
    session_finish,
    session_reopen,
    session_request_repair,
    session_set_paused,
    session_stop,
    transition_approve,
    transition_cancel,
)

__all__ = [
    "CommandOutcome",
    "DispatchPoint",
    "RepairOutcome",
    "command_apply",
    "command_run",
    "member_add",
    "member_remove",
    "member_set_role",
    "project_create",
    "project_name_check",
    "repair_target",
    "session_apply_due",
    "session_change_mode",
    "session_create",
    "session_finish",
    "session_has_due",
    "session_read",
    "session_reopen",
    "session_request_repair",
    "session_set_paused",
    "session_step",
    "session_stop",
    "session_unit_ended",
    "steering_supersede",
    "transition_approve",
    "transition_cancel",
]
