"""The doctor's repairs: audit rows, the deterministic fixes, and leaving repair mode.

``doctor_repair`` applies every registered check's deterministic fix (``sf_core.doctor``)
and writes one ``RepairRecord`` per repair. ``session_repair_run`` is what repair mode
does at a dispatch point: the fixes, then — once the gate's checks pass — the session
returns to the axes it had before it entered repair (one logged transition naming the
transition it undoes).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction

from agents_app.axes import WorkMode
from agents_app.models import (
    AgentSession,
    ModeTransition,
    RepairRecord,
    TransitionScope,
    TransitionStatus,
)
from agents_app.services.sessions import _apply, _lock
from sf_core.actors import Actor, ActorKind
from sf_core.doctor import DoctorReport, RepairDone, doctor_fix, doctor_run, gate_forget


def repair_record(
    repair: RepairDone, actor: Actor, *, session: AgentSession | None = None
) -> RepairRecord:
    return RepairRecord.objects.create(
        check_id=repair.check_id,
        target=repair.target[:1000],
        action=repair.action[:1000],
        session=session,
        actor_kind=actor.kind,
        actor_user=actor.user,
        actor_label=actor.label,
    )


def doctor_repair(
    *, actor: Actor, session: AgentSession | None = None, ids: list[str] | None = None
) -> list[RepairDone]:
    """Apply the deterministic fixes (all, or the checks ``ids``), each with its audit
    row. Idempotent: a second run at once finds nothing to repair and writes nothing."""

    def record(repair: RepairDone, by: Actor) -> None:
        repair_record(repair, by, session=session)

    done = doctor_fix(actor=actor, record=record, ids=ids)
    gate_forget()  # the gate's cached report is out of date now
    return done


@dataclass(frozen=True)
class RepairRun:
    repairs: list[RepairDone]
    report: DoctorReport  # the gate's checks after the fixes
    restored: ModeTransition | None  # the way back to the previous axes, if taken


GATE_ACTOR = Actor.system("health-gate")


def session_repair_run(*, session: AgentSession) -> RepairRun:
    """Repair mode at a dispatch point: run the fixes; when the gate's checks pass
    afterwards, return to the axes the session had before repair — if the health gate
    or a person (/repair) put it there. A session sent to repair because a task failed
    after its retries stays: passing health checks say nothing about that task."""
    actor = Actor.system("repair")
    repairs = doctor_repair(actor=actor, session=session)
    report = doctor_run(cheap_only=True)
    if not report.healthy:
        return RepairRun(repairs, report, None)
    return RepairRun(repairs, report, _restore(session, actor, len(repairs)))


def _returns_when_healthy(entry: ModeTransition) -> bool:
    return _by_gate(entry) or entry.actor_kind == ActorKind.USER


def _by_gate(entry: ModeTransition) -> bool:
    return entry.actor_kind == GATE_ACTOR.kind and entry.actor_label == GATE_ACTOR.label


def entered_by_gate(session: AgentSession) -> bool:
    """Whether the pre-dispatch health gate moved the session into repair."""
    entry = repair_entry(session)
    return entry is not None and _by_gate(entry)


def _restore(session: AgentSession, actor: Actor, repaired: int) -> ModeTransition | None:
    with transaction.atomic():
        locked = _lock(session)
        if locked.work_mode != WorkMode.REPAIR:
            return None  # someone moved it meanwhile
        entered = repair_entry(locked)
        if entered is None or not _returns_when_healthy(entered):
            return None  # a person decides (or /doctor heal)
        transition = _apply(
            locked,
            entered.from_axes,
            locked.paused,
            reason=f"repair done ({repaired} repairs; health checks pass): back to the axes "
            f"before transition {entered.pk}",
            actor=actor,
            scope=TransitionScope.NOW,
        )
    session.refresh_from_db()
    return transition


def repair_entry(session: AgentSession) -> ModeTransition | None:
    """The applied transition that moved the session into repair (the latest)."""
    return (
        session.transitions.filter(status=TransitionStatus.APPLIED, to_work_mode=WorkMode.REPAIR)
        .exclude(from_work_mode=WorkMode.REPAIR)
        .order_by("-applied_at", "-pk")
        .first()
    )
