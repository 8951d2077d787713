"""Applying a parsed slash command to a session: one service for every surface."""

from __future__ import annotations

from dataclasses import dataclass, field

from agents_app import commands as cmd
from agents_app.axes import RunControl
from agents_app.badge import badge_for
from agents_app.models import AgentSession, ModeTransition, TransitionStatus
from agents_app.selectors import session_report
from agents_app.services.sessions import (
    Actor,
    session_change_mode,
    session_set_paused,
    session_stop,
)
from sf_core.signals import send_on_commit, session_runnable


@dataclass(frozen=True)
class CommandOutcome:
    """What a command did: the session afterwards, a message, and its transition."""

    session: AgentSession
    message: str
    transition: ModeTransition | None = None
    data: dict[str, object] = field(default_factory=dict)

    @property
    def pending(self) -> bool:
        return self.transition is not None and self.transition.status == TransitionStatus.PENDING


def command_run(*, session: AgentSession, text: str, actor: Actor) -> CommandOutcome:
    """Parse ``text`` and apply it. Bad input raises ``CommandRejected`` and changes nothing."""
    return command_apply(session=session, command=cmd.parse(text), actor=actor, text=text)


def command_apply(
    *, session: AgentSession, command: cmd.Command, actor: Actor, text: str = ""
) -> CommandOutcome:
    reason = f"{text.strip() or type(command).__name__} by {actor.label or actor.kind}"
    transition: ModeTransition | None
    match command:
        case cmd.SetAxes(changes=changes, resume=resume):
            transition = session_change_mode(
                session=session, changes=changes, reason=reason, actor=actor, resume=resume
            )
        case cmd.Next(changes=changes):
            transition = session_change_mode(
                session=session, changes=changes, reason=reason, actor=actor, resume=True
            )
        case cmd.Steer(changes=changes, scope=scope):
            transition = session_change_mode(
                session=session, changes=changes, reason=reason, actor=actor, scope=scope
            )
        case cmd.Pause():
            transition = session_set_paused(
                session=session, paused=True, reason=reason, actor=actor
            )
        case cmd.Stop():
            transition = session_stop(session=session, reason=reason, actor=actor)
        case cmd.Query(name=name):
            return _query(session, name)
    session.refresh_from_db()
    _start_dispatch(session)
    return CommandOutcome(
        session=session, message=_describe(session, transition), transition=transition
    )


def _start_dispatch(session: AgentSession) -> None:
    """A session that may run units now (autonomous or assisted, not paused) says so;
    the engine (an app built on this one) listens and dispatches."""
    if session.paused or session.run_control == RunControl.MANUAL:
        return
    send_on_commit(session_runnable, sender=AgentSession, session_id=session.pk)


def _describe(session: AgentSession, transition: ModeTransition | None) -> str:
    badge = badge_for(session).full_text
    if transition is None:
        return f"no change: {badge}"
    if transition.status == TransitionStatus.PENDING:
        return f"pending ({transition.scope}): {transition.summary}; now {badge}"
    return f"{transition.summary}: {badge}"


def _query(session: AgentSession, name: str) -> CommandOutcome:
    report = session_report(session)
    if name == "status":
        message = f"{badge_for(session).full_text} · {report['status']}"
        if report["pending_transitions"]:
            message += f" · {report['pending_transitions']} pending"
    elif name == "cost":
        message = _cost_line(report)
    elif name == "tasks":
        message = str(report.get("tasks_summary", "no tasks"))
    else:
        message = f"{report['transitions']} transitions · {_cost_line(report)}"
    return CommandOutcome(session=session, message=message, data=report)


def _cost_line(report: dict[str, object]) -> str:
    spent, budget = report["cost_spent"], report["cost_budget"]
    if budget is None:
        return f"spent ${spent} (no budget)"
    return f"spent ${spent} of ${budget} ({report['budget_used_percent']}%)"
