"""Run control at unit boundaries (DESIGN §2, §4.7): ``/next`` runs exactly one unit and
then pauses, and the engine asks here, after every unit, whether the session pauses.

``/next`` does not change the run control. It sets ``step_requested``: the engine then
dispatches one unit (even under manual), at most one at a time, and when that unit
ends ``session_unit_ended`` pauses the session — the pause assisted run control makes
after each unit (``PauseCause.ASSISTED``: the next ``/next`` lifts it). If a unit is
already running when ``/next`` arrives, that unit is the one step.
"""

from __future__ import annotations

from collections.abc import Collection

from django.db import transaction

from agents_app.axes import RunControl
from agents_app.models import AgentSession, ModeTransition, PauseCause, TransitionScope
from agents_app.services.sessions import _apply, _lock, session_set_paused, supersede_pending
from sf_core.actors import Actor

ASSISTED_DONE = "assisted run control: one unit done; /next runs another"
STEP_DONE = "/next: one unit done; /next runs another"


def session_step(*, session: AgentSession, reason: str, actor: Actor) -> ModeTransition:
    """``/next``: run one unit, then pause. Lifts a pause; the axes stay as they are.
    Logged as a transition (it changes no axis, it may resume)."""
    with transaction.atomic():
        locked = _lock(session)
        locked.step_requested = True
        return _apply(
            locked, locked.axes, False, reason=reason, actor=actor, scope=TransitionScope.NOW
        )


def session_unit_ended(*, session: AgentSession) -> ModeTransition | None:
    """A unit of the session ended (the engine calls this at its after-unit point).
    Assisted run control, or a ``/next`` step, pauses the session now; the step is
    used up either way. Returns the pause's transition, if it paused."""
    with transaction.atomic():
        locked = _lock(session)
        stepped = locked.step_requested
        if stepped:
            AgentSession.objects.filter(pk=locked.pk).update(step_requested=False)
        if locked.paused or not (stepped or locked.run_control == RunControl.ASSISTED):
            return None
        return session_set_paused(
            session=locked,
            paused=True,
            reason=STEP_DONE if stepped else ASSISTED_DONE,
            actor=Actor.system("next" if stepped else "assisted"),
            cause=PauseCause.ASSISTED,
        )


def steering_supersede(
    *, session: AgentSession, axes: Collection[str] | None, by: str
) -> list[ModeTransition]:
    """A direct command is about to decide ``axes`` (all of them for None): pending
    steering on those axes is marked superseded, visibly, instead of being applied
    later over the person's newer choice. Steering on other axes stays pending."""
    with transaction.atomic():
        return supersede_pending(_lock(session), axes, by=by)
