"""Services for projects, sessions and their mode transitions (DESIGN §2).

Every change of an axis (and of the paused flag) writes one ``ModeTransition`` in the
same transaction as the change. Scoped changes are stored pending and applied only
by ``session_apply_due``, which the engine calls at its dispatch points — never
while a tool call is in flight.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from agents_app.access import Action, profile_action, require_actor
from agents_app.axes import (
    AXIS_CHOICES,
    NEW_SESSION_AXES,
    Axes,
    PermissionProfile,
    RunControl,
    WorkMode,
    profile_rank,
)
from agents_app.models import (
    Activity,
    AgentSession,
    ModeTransition,
    PauseCause,
    Project,
    SessionStatus,
    TransitionScope,
    TransitionStatus,
)
from agents_app.runtime.sandbox import profile_problem
from agents_app.schemas import RepairPolicy
from agents_app.services.dispatch_points import DUE_SCOPES, DispatchPoint, session_has_due
from sf_core.actors import Actor
from sf_core.errors import CommandRejected, InvalidTransition
from sf_core.live import Groups, broadcast
from sf_core.notices import Notice, NoticeKind, notice_raise

# --- projects and sessions ------------------------------------------------------------


def session_create(
    *,
    project: Project,
    created_by: User | None = None,
    title: str = "",
    axes: Mapping[str, str] | None = None,
    cost_budget: Decimal | None = None,
) -> AgentSession:
    """Start a session; unspecified axes take ``NEW_SESSION_AXES`` (the one default of
    every creator), the surface the model's, budgets the project's."""
    budgets = project.parsed_policy.budgets
    values = _validated_changes({**NEW_SESSION_AXES, **(axes or {})})
    session = AgentSession.objects.create(
        project=project,
        created_by=created_by,
        title=title,
        cost_budget=cost_budget if cost_budget is not None else budgets.session_cost_usd,
        max_autonomous_continues=budgets.max_autonomous_continues,
        **values,
    )
    broadcast(Groups.SESSIONS, "sessions.changed", session_id=session.pk)
    return session


# --- mode changes ---------------------------------------------------------------------


def session_change_mode(
    *,
    session: AgentSession,
    changes: Mapping[str, str],
    reason: str,
    actor: Actor,
    scope: str | None = None,
    resume: bool = False,
) -> ModeTransition | None:
    """Change some axes. Returns the transition, or None if nothing would change.

    With ``scope`` (steering) the change is stored pending. Without it, it applies at
    once when the engine is idle, and otherwise waits as a ``now`` change for the
    next dispatch point. ``resume`` also lifts a pause (explicit run-control commands).
    """
    values = _validated_changes(changes)
    with transaction.atomic():
        locked = _lock(session)
        if resume and "run_control" in values and locked.step_requested:
            # A person chose the run control: a /next step still waiting is theirs no more.
            AgentSession.objects.filter(pk=locked.pk).update(step_requested=False)
            locked.step_requested = False
        if scope is not None:
            _check_scope(scope)
            return _record_pending(locked, values, reason, actor, scope)
        if locked.activity != Activity.IDLE:
            return _record_pending(locked, values, reason, actor, TransitionScope.NOW)
        target = locked.axes.replace(**values)
        paused = False if resume else locked.paused
        if target == locked.axes and paused == locked.paused:
            return None
        return _apply(locked, target, paused, reason=reason, actor=actor, scope=TransitionScope.NOW)


def session_set_paused(
    *,
    session: AgentSession,
    paused: bool,
    reason: str,
    actor: Actor,
    cause: PauseCause = PauseCause.PERSON,
) -> ModeTransition | None:
    """Pause (keeping all state) or resume. The engine checks the flag at dispatch points;
    ``cause`` is what code decides on (who may lift the pause), ``reason`` is for people."""
    with transaction.atomic():
        locked = _lock(session)
        if locked.paused == paused:
            return None
        locked.pause_reason = reason if paused else ""
        locked.pause_cause = cause if paused else PauseCause.NONE
        return _apply(
            locked, locked.axes, paused, reason=reason, actor=actor, scope=TransitionScope.NOW
        )


def session_stop(*, session: AgentSession, reason: str, actor: Actor) -> ModeTransition:
    """Stop an autonomous run and clear its state: manual control, no pause, no /next
    step, continuation count back to zero. Pending steering is marked superseded (kept
    in the log, never applied); the engine starts no unit of a stopped session."""
    with transaction.atomic():
        locked = _lock(session)
        supersede_pending(locked, None, by=reason)
        locked.autonomous_continues = 0
        locked.step_requested = False
        # A running unit stops at its next dispatch point, never inside a tool call.
        locked.interrupt_requested = locked.activity != Activity.IDLE
        locked.pause_reason = ""
        locked.pause_cause = PauseCause.NONE
        target = locked.axes.replace(run_control=RunControl.MANUAL)
        return _apply(locked, target, False, reason=reason, actor=actor, scope=TransitionScope.NOW)


# Statuses of a session whose work has ended; ``session_reopen`` brings it back.
FINISHED_SESSION_STATUSES = (SessionStatus.COMPLETED, SessionStatus.FAILED)


def session_finish(*, session: AgentSession, status: str, reason: str, actor: Actor) -> bool:
    """An active session whose work ended becomes completed or failed: the engine runs
    nothing more for it and its badge stops pulsing. The axes stay as they were, so a
    person's retry (``session_reopen``) carries on under the same run control. Logged as
    a transition that changes no axis; True if this call finished the session."""
    if status not in FINISHED_SESSION_STATUSES:
        raise InvalidTransition(f"a session finishes as completed or failed, not {status}")
    with transaction.atomic():  # the status and its notice commit together
        finished = _set_status(
            session, SessionStatus.ACTIVE, status, f"session {status}: {reason}", actor
        )
        if finished:
            _finished_notice(session, status, reason)
    return finished


def _finished_notice(session: AgentSession, status: str, reason: str) -> None:
    """One notice per finish: a re-opened session that finishes again is news again."""
    logged = ModeTransition.objects.filter(session=session).order_by("-pk").first()
    notice_raise(
        Notice(
            kind=NoticeKind.SESSION_FINISHED,
            dedupe_key=f"session:{session.pk}:{status}:{logged.pk if logged else 0}",
            project_id=session.project_id,
            session_id=session.pk,
            text=f"session {session.pk} {session.title!r} {status}: {reason}",
            url=reverse("session-detail", args=[session.pk]),
            payload={"status": status},
        )
    )


def session_reopen(*, session: AgentSession, reason: str, actor: Actor) -> bool:
    """A finished session becomes active again (a retried task, a newly accepted plan).
    True if it was finished; an active session is left alone."""
    return _set_status(session, None, SessionStatus.ACTIVE, f"session re-opened: {reason}", actor)


def _set_status(
    session: AgentSession, expected: str | None, status: str, reason: str, actor: Actor
) -> bool:
    with transaction.atomic():
        locked = _lock(session)
        finished = locked.status in FINISHED_SESSION_STATUSES
        if locked.status == status or (expected is None and not finished):
            return False
        if expected is not None and locked.status != expected:
            return False
        locked.status = status
        locked.finished_at = timezone.now() if status in FINISHED_SESSION_STATUSES else None
        _apply(
            locked,
            locked.axes,
            locked.paused,
            reason=reason,
            actor=actor,
            scope=TransitionScope.NOW,
        )
    session.status, session.finished_at = status, locked.finished_at
    return True


def session_apply_due(
    *, session: AgentSession, point: DispatchPoint, actor: Actor | None = None
) -> list[ModeTransition]:
    """Apply, in request order, the pending transitions whose scope is due at ``point``.

    Called by the engine only: before a unit or tool call is dispatched, after one
    finishes, and at milestones. Transitions awaiting approval stay pending.
    """
    actor = actor or Actor.system("engine")
    applied: list[ModeTransition] = []
    if not session_has_due(session_id=session.pk, point=point):
        # Nearly always: nothing is pending. Locking the session row to find that out
        # cost a WAL-flushing commit at every tool call (a row lock is written to disk).
        # A transition requested just after this look is applied at the next point.
        return applied
    with transaction.atomic():
        locked = _lock(session)
        due = locked.transitions.filter(
            status=TransitionStatus.PENDING, requires_approval=False, scope__in=DUE_SCOPES[point]
        ).select_for_update()
        for pending in due.order_by("requested_at", "pk"):
            applied.append(_apply_pending(locked, pending))
    return applied


def transition_approve(*, transition: ModeTransition, actor: Actor) -> ModeTransition:
    """A person accepts a transition that asked for approval (e.g. repair under `ask`):
    an approver's act, and an admin's when it moves the session to unrestricted."""
    project = transition.session.project
    require_actor(actor, project, Action.RAISE_TRUSTED)
    require_actor(actor, project, profile_action(transition.to_permission_profile))
    with transaction.atomic():
        locked = ModeTransition.objects.select_for_update().get(pk=transition.pk)
        if locked.status != TransitionStatus.PENDING or not locked.requires_approval:
            raise InvalidTransition("only a pending transition awaiting approval can be approved")
        locked.requires_approval = False
        locked.reason = f"{locked.reason} (approved by {actor.label or actor.kind})"
        locked.save(update_fields=["requires_approval", "reason"])
        broadcast(Groups.session(locked.session_id), "session.changed")
    return locked


def transition_cancel(*, transition: ModeTransition, actor: Actor) -> ModeTransition:
    """Pending steering withdrawn; the timeline says who withdrew it (as an approval
    names its approver), not only who asked for it."""
    require_actor(actor, transition.session.project, Action.STEER)
    with transaction.atomic():
        locked = ModeTransition.objects.select_for_update().get(pk=transition.pk)
        if locked.status != TransitionStatus.PENDING:
            raise InvalidTransition("only a pending transition can be cancelled")
        locked.status = TransitionStatus.CANCELLED
        note = f" (cancelled by {actor.label or actor.kind})"
        limit = ModeTransition._meta.get_field("reason").max_length or 500
        locked.reason = locked.reason[: limit - len(note)] + note
        locked.save(update_fields=["status", "reason"])
        broadcast(Groups.session(transition.session_id), "session.changed")
    transition.refresh_from_db()
    return transition


# --- the automatic transition to repair -----------------------------------------------


@dataclass(frozen=True)
class RepairOutcome:
    action: str  # applied | awaiting-approval | logged | not-autonomous | already-repairing
    transition: ModeTransition | None


def session_request_repair(
    *, session: AgentSession, cause: str, actor: Actor | None = None
) -> RepairOutcome:
    """SF wants to move to repair (health gate failed, repeated verification failure,
    corrupt state). Never automatic under manual or assisted run control; otherwise
    the project's repair policy decides: auto, ask, or log-only. ``actor`` names who
    asks (the health gate's entries are left again once the checks pass)."""
    actor = actor or Actor.system("repair")
    with transaction.atomic():
        locked = _lock(session)
        if locked.run_control != RunControl.AUTONOMOUS:
            return RepairOutcome("not-autonomous", None)
        if locked.work_mode == WorkMode.REPAIR:
            return RepairOutcome("already-repairing", None)
        target = repair_target(locked.axes)
        policy = locked.project.parsed_policy.repair_policy
        reason = f"repair: {cause}"
        if policy == RepairPolicy.AUTO:
            transition = _apply(
                locked, target, locked.paused, reason=reason, actor=actor, scope=TransitionScope.NOW
            )
            return RepairOutcome("applied", transition)
        transition = _write(
            locked,
            target,
            locked.paused,
            reason=reason if policy == RepairPolicy.ASK else f"log-only policy: {reason}",
            actor=actor,
            scope=TransitionScope.AFTER_CURRENT_UNIT,
            status=TransitionStatus.PENDING
            if policy == RepairPolicy.ASK
            else TransitionStatus.CANCELLED,
            requires_approval=policy == RepairPolicy.ASK,
        )
        broadcast(Groups.session(locked.pk), "session.changed")
        return RepairOutcome(
            "awaiting-approval" if policy == RepairPolicy.ASK else "logged", transition
        )


def repair_target(axes: Axes) -> Axes:
    """`build | autonomous | trusted | smart` → `repair | autonomous | normal | smart`.

    The profile drops to normal but never rises: repair does not grant trust.
    """
    profile = axes.permission_profile
    if profile_rank(profile) > profile_rank(PermissionProfile.NORMAL):
        profile = PermissionProfile.NORMAL
    return axes.replace(work_mode=WorkMode.REPAIR, permission_profile=profile, model_mode="smart")


# --- internals ------------------------------------------------------------------------


def _lock(session: AgentSession) -> AgentSession:
    return AgentSession.objects.select_for_update().select_related("project").get(pk=session.pk)


def _validated_changes(changes: Mapping[str, str]) -> dict[str, str]:
    values: dict[str, str] = {}
    for axis, value in changes.items():
        choices = AXIS_CHOICES.get(axis)
        if choices is None:
            raise CommandRejected(f"unknown axis {axis!r}; accepted: {', '.join(AXIS_CHOICES)}")
        if value not in choices.values:
            raise CommandRejected(
                f"unknown {axis} {value!r}; accepted: {', '.join(choices.values)}"
            )
        values[axis] = str(value)
    problem = profile_problem(values.get("permission_profile", "restricted"))
    if problem:
        raise CommandRejected(problem)
    return values


def _check_scope(scope: str) -> None:
    if scope not in TransitionScope.values:
        raise CommandRejected(
            f"unknown scope {scope!r}; accepted: {', '.join(TransitionScope.values)}"
        )


def _record_pending(
    session: AgentSession, values: dict[str, str], reason: str, actor: Actor, scope: str
) -> ModeTransition | None:
    target = session.axes.replace(**values)
    if target == session.axes:
        return None  # nothing to steer towards: the axes already have these values
    transition = _write(
        session,
        target,
        session.paused,
        reason=reason,
        actor=actor,
        scope=scope,
        status=TransitionStatus.PENDING,
    )
    broadcast(Groups.session(session.pk), "session.changed")
    return transition


def _apply_pending(session: AgentSession, pending: ModeTransition) -> ModeTransition:
    """Re-base a pending change on the axes as they are now, then apply it."""
    target = session.axes.replace(**pending.changed_axes)
    to_paused = pending.to_paused if pending.from_paused != pending.to_paused else session.paused
    now = timezone.now()
    _set_sides(pending, session.axes, session.paused, target, to_paused)
    pending.status = TransitionStatus.APPLIED
    pending.applied_at = now
    pending.save()
    _store_axes(session, target, to_paused, now)
    return pending


def _apply(
    session: AgentSession, target: Axes, paused: bool, *, reason: str, actor: Actor, scope: str
) -> ModeTransition:
    now = timezone.now()
    transition = _write(
        session,
        target,
        paused,
        reason=reason,
        actor=actor,
        scope=scope,
        status=TransitionStatus.APPLIED,
        applied_at=now,
    )
    _store_axes(session, target, paused, now)
    return transition


def _store_axes(session: AgentSession, target: Axes, paused: bool, now: Any) -> None:
    for axis, value in target.as_dict().items():
        setattr(session, axis, value)
    session.paused = paused
    if not paused:
        session.pause_reason, session.pause_cause = "", PauseCause.NONE
    session.mode_updated_at = now
    session.save()
    broadcast(Groups.session(session.pk), "session.changed")
    broadcast(Groups.SESSIONS, "sessions.changed", session_id=session.pk)


def _write(
    session: AgentSession,
    target: Axes,
    paused: bool,
    *,
    reason: str,
    actor: Actor,
    scope: str,
    status: str,
    applied_at: Any = None,
    requires_approval: bool = False,
) -> ModeTransition:
    transition = ModeTransition(
        session=session,
        reason=reason[:500],
        scope=scope,
        actor_kind=actor.kind,
        actor_user=actor.user,
        actor_label=actor.label,
        status=status,
        applied_at=applied_at,
        requires_approval=requires_approval,
    )
    _set_sides(transition, session.axes, session.paused, target, paused)
    transition.save()
    return transition


def _set_sides(
    transition: ModeTransition, before: Axes, was_paused: bool, after: Axes, paused: bool
) -> None:
    for axis, value in before.as_dict().items():
        setattr(transition, f"from_{axis}", value)
    for axis, value in after.as_dict().items():
        setattr(transition, f"to_{axis}", value)
    transition.from_paused = was_paused
    transition.to_paused = paused


def supersede_pending(
    session: AgentSession, axes: Collection[str] | None, *, by: str
) -> list[ModeTransition]:
    """Mark superseded the pending transitions that change any of ``axes`` (all of them
    for None): a later direct command decided those axes first. The caller holds the
    session's lock. They stay in the timeline with the command that superseded them."""
    pending = session.transitions.filter(status=TransitionStatus.PENDING).select_for_update()
    superseded = [
        t
        for t in pending.order_by("requested_at", "pk")
        if axes is None or set(t.changed_axes) & set(axes)
    ]
    for transition in superseded:
        transition.status = TransitionStatus.SUPERSEDED
        transition.reason = f"{transition.reason} (superseded by {by})"[:500]
        transition.save(update_fields=["status", "reason"])
    if superseded:
        broadcast(Groups.session(session.pk), "session.changed")
    return superseded
