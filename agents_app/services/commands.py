"""Applying a parsed slash command to a session: one service for every surface.

What the commands mean (the same on the web bar, ``sf command`` and headless):

- ``/next`` runs exactly one unit, then the session pauses; the run control stays.
- ``/stop`` stops dispatch (manual control) and a running unit ends at its next
  dispatch point, recorded as cancelled; its task waits, paused, for the next run.
- raising the permission profile to ``unrestricted`` needs ``--confirm``.
- a direct command never drops pending steering silently: steering on the axes it
  decides is marked superseded, and the message names it; other steering stays.
- ``/status`` and ``/session-report`` answer what ``sf headless query`` answers, in lines.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db import transaction

from agents_app import commands as cmd
from agents_app.access import require_command
from agents_app.axes import PermissionProfile, RunControl
from agents_app.badge import badge_for
from agents_app.doctor_access import repairs_require, report_for
from agents_app.models import AgentSession, ModeTransition, TransitionStatus
from agents_app.reports import cost_line, session_report_text, status_text
from agents_app.selectors import session_report
from agents_app.services.repairs import doctor_repair
from agents_app.services.runs import session_step, steering_supersede
from agents_app.services.sessions import (
    Actor,
    session_change_mode,
    session_set_paused,
    session_stop,
)
from sf_core.doctor import doctor_run
from sf_core.errors import CommandRejected
from sf_core.signals import (
    collect,
    doctor_heal_requested,
    send_on_commit,
    session_runnable,
    skill_command_requested,
)

UNRESTRICTED = PermissionProfile.UNRESTRICTED.value


@dataclass(frozen=True)
class CommandOutcome:
    """What a command did: the session afterwards, a message, and its transition."""

    session: AgentSession
    message: str
    transition: ModeTransition | None = None
    data: dict[str, object] = field(default_factory=dict)
    superseded: list[ModeTransition] = field(default_factory=list)

    @property
    def pending(self) -> bool:
        return self.transition is not None and self.transition.status == TransitionStatus.PENDING


def command_run(*, session: AgentSession, text: str, actor: Actor) -> CommandOutcome:
    """Parse ``text`` and apply it. Bad input raises ``CommandRejected`` and changes nothing."""
    return command_apply(session=session, command=cmd.parse(text), actor=actor, text=text)


def command_apply(
    *, session: AgentSession, command: cmd.Command, actor: Actor, text: str = ""
) -> CommandOutcome:
    """Apply a parsed command. A person acting needs the role the command needs
    (``access.command_action``): refused, it raises ``AccessDenied`` and changes nothing."""
    require_command(actor, session, command)
    if isinstance(command, cmd.Query):
        return _query(session, command.name)
    if isinstance(command, cmd.SkillCommand):
        return _skill(session, command, actor)
    if isinstance(command, cmd.Doctor):
        return _doctor(session, command, actor)
    _check_confirmed(session, command, text)
    reason = f"{text.strip() or type(command).__name__} by {actor.label or actor.kind}"
    with transaction.atomic():
        superseded = _supersede(session, command, reason)
        transition = _change(session, command, reason, actor)
        session.refresh_from_db()
        _start_dispatch(session)  # announced on this commit
    message = _describe(session, command, transition) + _superseded_note(superseded)
    return CommandOutcome(
        session=session, message=message, transition=transition, superseded=superseded
    )


def _change(
    session: AgentSession, command: cmd.Command, reason: str, actor: Actor
) -> ModeTransition | None:
    match command:
        case cmd.SetAxes(changes=changes, resume=resume):
            return session_change_mode(
                session=session, changes=changes, reason=reason, actor=actor, resume=resume
            )
        case cmd.Steer(changes=changes, scope=scope):
            return session_change_mode(
                session=session, changes=changes, reason=reason, actor=actor, scope=scope
            )
        case cmd.Next():
            return session_step(session=session, reason=reason, actor=actor)
        case cmd.Pause():
            return session_set_paused(session=session, paused=True, reason=reason, actor=actor)
        case cmd.Stop():
            return session_stop(session=session, reason=reason, actor=actor)
    raise AssertionError(f"unhandled command {command!r}")


def _supersede(session: AgentSession, command: cmd.Command, by: str) -> list[ModeTransition]:
    """A direct change decides its axes now: steering pending on them would undo it
    later, so it is superseded (visibly). /stop clears all pending steering."""
    if isinstance(command, cmd.SetAxes):
        return steering_supersede(session=session, axes=command.changes, by=by)
    if isinstance(command, cmd.Stop):
        return steering_supersede(session=session, axes=None, by=by)
    return []


def _check_confirmed(session: AgentSession, command: cmd.Command, text: str) -> None:
    """Raising the profile to unrestricted lets every tool call proceed without
    approval: it takes an explicit ``--confirm``, on every surface."""
    if not isinstance(command, cmd.SetAxes | cmd.Steer) or command.confirmed:
        return
    if command.changes.get("permission_profile") != UNRESTRICTED:
        return
    if session.permission_profile == UNRESTRICTED:
        return
    confirm_text = f"{text.strip()} {cmd.CONFIRM}" if text.strip() else cmd.CONFIRM
    raise cmd.ConfirmationRequired(
        "raising the permission profile to unrestricted lets every tool call proceed "
        "without approval (deny lists and safety gates still apply); to confirm, "
        f"append {cmd.CONFIRM}: {confirm_text}",
        confirm_text=confirm_text,
    )


def _start_dispatch(session: AgentSession) -> None:
    """A session that may run units now (autonomous, assisted or a /next step, not
    paused) says so; the engine (an app built on this one) listens and dispatches —
    on a worker when there is one: the page or API call that typed the command does
    not wait for it (``to_workers``)."""
    if session.paused or (session.run_control == RunControl.MANUAL and not session.step_requested):
        return
    send_on_commit(session_runnable, sender=AgentSession, session_id=session.pk, to_workers=True)


def _describe(
    session: AgentSession, command: cmd.Command, transition: ModeTransition | None
) -> str:
    badge = badge_for(session).full_text
    if isinstance(command, cmd.Next):
        return (
            f"next: one unit runs, then the session pauses "
            f"(run control stays {session.run_control}): {badge}"
        )
    if isinstance(command, cmd.Stop):
        unit = "; the running unit stops at its next dispatch point" * session.interrupt_requested
        return f"stopped: no more units start{unit}: {badge}"
    if transition is None:
        return f"no change: {badge}"
    if transition.status == TransitionStatus.PENDING:
        return f"pending ({transition.scope}): {transition.summary}; now {badge}"
    return f"{transition.summary}: {badge}"


def _superseded_note(superseded: list[ModeTransition]) -> str:
    return "".join(
        f"; superseded pending steer #{t.pk} ({t.summary}, {t.scope})" for t in superseded
    )


def _skill(session: AgentSession, command: cmd.SkillCommand, actor: Actor) -> CommandOutcome:
    """Answered by the skills app (above this one), through a signal."""
    answer = collect(
        skill_command_requested,
        sender=AgentSession,
        session=session,
        name=command.name,
        args=command.args,
        actor=actor,
    )
    if not answer:
        raise CommandRejected("skills are not available here (the skills app is not installed)")
    return CommandOutcome(
        session=session, message=str(answer["message"]), data=dict(answer.get("data", {}))
    )


def _doctor(session: AgentSession, command: cmd.Doctor, actor: Actor) -> CommandOutcome:
    """/doctor reports (the findings of projects the person may view); /doctor fix
    applies the deterministic repairs (audited, with the session named) when the person
    may repair each project they touch; /doctor heal asks the engine for a repair unit
    (a signal: the engine is the app above this one)."""
    repairs = []
    if command.action == cmd.DoctorAction.FIX:
        # The fixes act across projects: REPAIR on this session's project is not enough.
        ids = repairs_require(actor, doctor_run())
        repairs = doctor_repair(actor=actor, session=session, ids=ids) if ids else []
    report = report_for(doctor_run(), actor.user)  # only the projects the person sees
    data: dict[str, object] = {"report": report.model_dump(mode="json")}
    lines = [f"fixed {r.check_id}: {r.target}: {r.action}" for r in repairs]
    if command.action == cmd.DoctorAction.FIX and not repairs:
        lines.append("nothing to repair")
    lines.append(report.brief())
    if command.action == cmd.DoctorAction.HEAL:
        answer = collect(
            doctor_heal_requested, sender=AgentSession, session=session, report=report, actor=actor
        )
        if not answer:
            raise CommandRejected("/doctor heal needs the engine (tasks_app), not installed here")
        lines.append(str(answer["message"]))
        data.update(answer.get("data", {}))
    data["repairs"] = [r.model_dump(mode="json") for r in repairs]
    return CommandOutcome(session=session, message="\n".join(lines), data=data)


def _query(session: AgentSession, name: str) -> CommandOutcome:
    report = session_report(session)
    if name == "status":
        message = status_text(session, report)
    elif name == "cost":
        message = cost_line(report)
    elif name == "tasks":
        message = str(report.get("tasks_summary", "no tasks"))
    else:
        message = session_report_text(session, report)
    return CommandOutcome(session=session, message=message, data=report)
