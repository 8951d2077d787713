"""Who a schedule acts as, and what that person must be allowed (``agents_app.access``).

A schedule's runs act as its person (``run_as``: whoever saved it, or a person an
admin named), never as the person who happens to click **Run now**. What a run does
needs what doing it by hand would: creating a session and stating an intent
(operator), running at the schedule's profile (``trusted``: approver,
``unrestricted``: admin) and, unless the run control is manual, accepting the plan
(approver). That is checked when the schedule is saved (for the person saving it and
for its person) and again at every run: a person who lost the role since gets a
*refused* run with the reason, not a session. A schedule saved at the server's shell
without ``--as`` acts as SF itself, which no project role binds.
"""

from __future__ import annotations

from django.contrib.auth.models import User

from agents_app.access import AccessDenied, Action, profile_action, require_actor
from agents_app.axes import RunControl
from agents_app.models import Project
from sf_core.actors import Actor
from tasks_app.models import Schedule, ScheduleOwner

SCHEDULE_ACTOR_LABEL = "schedule"


def schedule_actions(*, run_control: str, permission_profile: str) -> tuple[Action, ...]:
    """What a run of a schedule with these axes does, as access actions."""
    actions = [Action.CREATE_SESSION, Action.STATE_INTENT, profile_action(permission_profile)]
    if run_control != RunControl.MANUAL:
        actions.append(Action.ACCEPT_PLAN)
    return tuple(dict.fromkeys(actions))


def actions_require(
    actor: Actor, project: Project, *, run_control: str, permission_profile: str
) -> None:
    """``AccessDenied`` naming the first thing ``actor`` may not do."""
    for action in schedule_actions(run_control=run_control, permission_profile=permission_profile):
        require_actor(actor, project, action)


def schedule_actor(schedule: Schedule) -> Actor:
    """Who the schedule's runs act as."""
    if schedule.owner == ScheduleOwner.SYSTEM:
        return Actor.system(SCHEDULE_ACTOR_LABEL)
    if schedule.run_as is None:
        return Actor(kind="user", user=None, label="(deleted)")
    return Actor.of(schedule.run_as)


def schedule_refusal(*, schedule: Schedule) -> str:
    """Why the schedule's person may not run it now ("" when they may)."""
    if schedule.owner == ScheduleOwner.SYSTEM:
        return ""
    person = schedule.run_as
    if person is None:
        return "the schedule's person was deleted; an operator must save it again"
    if not person.is_active:
        return f"{person.get_username()} is no longer an active user"
    try:
        actions_require(
            Actor.of(person),
            schedule.project,
            run_control=schedule.run_control,
            permission_profile=schedule.permission_profile,
        )
    except AccessDenied as exc:
        return f"{person.get_username()} is {exc.role or 'not a member'}; " + (
            f"the schedule needs {exc.needed} to {exc.action.value}"
        )
    return ""


def person_of(actor: Actor) -> User | None:
    return actor.user if isinstance(actor.user, User) else None
