"""Events from the database: what the engine did since the last look.

Headless watches a session the same way whether its units run inline in this
process or on Celery workers: by reading the rows the engine writes (transitions,
task transitions, units, traced tool calls, risk decisions, plans). Each ``poll``
returns the new events in time order.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from typing import Any

from django.db.models import Max
from django.utils import timezone

from agents_app.badge import badge_for
from agents_app.models import (
    AgentSession,
    Decision,
    ModeTransition,
    ReviewStatus,
    RiskDecision,
    TraceEvent,
    TraceKind,
)
from tasks_app.headless.events import (
    Axes,
    DecisionEvent,
    HeartbeatEvent,
    PlanEvent,
    SessionEvent,
    TaskEvent,
    ToolCallEvent,
    TransitionEvent,
    UnitEvent,
)
from tasks_app.models import Plan, PlanStatus, Task, TaskTransition, Unit, UnitStatus


def _axes(values: dict[str, str]) -> Axes:
    return Axes(**values)


def session_event(session: AgentSession, *, resumed: bool) -> SessionEvent:
    return SessionEvent(
        at=timezone.now(),
        session=session.pk,
        project=session.project.name,
        repo_path=session.project.repo_path,
        axes=_axes(session.axes.as_dict()),
        paused=session.paused,
        badge=badge_for(session).full_text,
        resumed=resumed,
    )


class Observer:
    """Remembers what it has reported; everything newer is an event."""

    def __init__(self, session_id: int, *, from_start: bool) -> None:
        self.session_id = session_id
        self.units_seen: set[int] = set()
        self.unit_status: dict[int, str] = {}
        self.plan_status: dict[int, str] = {}
        self.review_status: dict[int, str] = {}
        self.last_transition = self.last_task_transition = 0
        self.last_tool_call = self.last_decision = 0
        if not from_start:
            self._skip_history()

    def _skip_history(self) -> None:
        """A resumed session: report only what happens from now on."""
        sid = self.session_id
        self.last_transition = _max(ModeTransition.objects.filter(session_id=sid))
        self.last_task_transition = _max(TaskTransition.objects.filter(task__plan__session_id=sid))
        self.last_tool_call = _max(TraceEvent.objects.filter(session_id=sid))
        self.last_decision = _max(RiskDecision.objects.filter(session_id=sid))
        for unit in Unit.objects.filter(task__plan__session_id=sid).values("pk", "status"):
            self.units_seen.add(unit["pk"])
            self.unit_status[unit["pk"]] = unit["status"]
        for plan in Plan.objects.filter(session_id=sid).values("pk", "status"):
            self.plan_status[plan["pk"]] = plan["status"]
        for row in RiskDecision.objects.filter(session_id=sid).values("pk", "review_status"):
            self.review_status[row["pk"]] = row["review_status"]

    def poll(self) -> list[Any]:
        events: list[Any] = [
            *self._transitions(),
            *self._plans(),
            *self._tasks(),
            *self._units(),
            *self._tool_calls(),
            *self._decisions(),
        ]
        events.sort(key=lambda event: event.at)
        return events

    def heartbeat(self, elapsed: float) -> HeartbeatEvent:
        session = AgentSession.objects.get(pk=self.session_id)
        counts = Counter(
            Task.objects.filter(plan__session_id=self.session_id).values_list("status", flat=True)
        )
        return HeartbeatEvent(
            at=timezone.now(),
            session=self.session_id,
            elapsed_s=round(elapsed, 3),
            activity=session.activity,
            tasks=dict(sorted(counts.items())),
        )

    # --- one table each ------------------------------------------------------------

    def _transitions(self) -> list[TransitionEvent]:
        rows = ModeTransition.objects.filter(
            session_id=self.session_id, pk__gt=self.last_transition
        ).order_by("pk")
        events = []
        for row in rows:
            self.last_transition = row.pk
            events.append(
                TransitionEvent(
                    at=row.applied_at or row.requested_at,
                    session=self.session_id,
                    id=row.pk,
                    from_axes=_axes(row.from_axes.as_dict()),
                    to_axes=_axes(row.to_axes.as_dict()),
                    paused=row.to_paused,
                    reason=row.reason,
                    scope=row.scope,
                    status=row.status,
                    actor=row.actor_display,
                )
            )
        return events

    def _plans(self) -> list[PlanEvent]:
        events = []
        for plan in Plan.objects.filter(session_id=self.session_id).order_by("pk"):
            if self.plan_status.get(plan.pk) == plan.status:
                continue
            self.plan_status[plan.pk] = plan.status
            events.append(
                PlanEvent(
                    at=_plan_time(plan),
                    session=self.session_id,
                    id=plan.pk,
                    status=plan.status,
                    summary=plan.summary,
                    tasks=plan.tasks.count(),
                    reason=plan.status_reason,
                )
            )
        return events

    def _tasks(self) -> list[TaskEvent]:
        rows = (
            TaskTransition.objects.filter(
                task__plan__session_id=self.session_id, pk__gt=self.last_task_transition
            )
            .select_related("task")
            .order_by("pk")
        )
        events = []
        for row in rows:
            self.last_task_transition = row.pk
            events.append(
                TaskEvent(
                    at=row.created_at,
                    session=self.session_id,
                    task=row.task.key,
                    title=row.task.title,
                    from_status=row.from_status,
                    to_status=row.to_status,
                    reason=row.reason,
                    actor=row.actor_label,
                )
            )
        return events

    def _units(self) -> list[UnitEvent]:
        known = self.unit_status
        rows = Unit.objects.filter(task__plan__session_id=self.session_id).select_related("task")
        events = []
        for unit in rows.order_by("pk"):
            started = unit.pk not in self.units_seen
            if not started and known.get(unit.pk) == unit.status:
                continue
            if started:
                self.units_seen.add(unit.pk)
                events.append(self._unit_event(unit, UnitStatus.RUNNING, unit.started_at))
            if unit.status != UnitStatus.RUNNING:
                events.append(self._unit_event(unit, unit.status, unit.finished_at))
            known[unit.pk] = unit.status
        return events

    def _unit_event(self, unit: Unit, status: str, at: datetime | None) -> UnitEvent:
        return UnitEvent(
            at=at or timezone.now(),
            session=self.session_id,
            task=unit.task.key,
            unit=unit.pk,
            attempt=unit.attempt,
            status=status,
            model=unit.model,
            cost_usd=str(unit.cost),
            summary=unit.summary if status != UnitStatus.RUNNING else "",
        )

    def _tool_calls(self) -> list[ToolCallEvent]:
        rows = TraceEvent.objects.filter(session_id=self.session_id, pk__gt=self.last_tool_call)
        events = []
        for row in rows.order_by("pk"):
            self.last_tool_call = row.pk
            if row.kind != TraceKind.TOOL_CALL:
                continue
            output = str(row.payload.get("output", ""))
            events.append(
                ToolCallEvent(
                    at=row.finished_at or row.started_at,
                    session=self.session_id,
                    unit=row.unit_id,
                    tool=row.name,
                    input_hash=row.input_hash,
                    ok=not output.startswith("error:"),
                )
            )
        return events

    def _decisions(self) -> list[DecisionEvent]:
        sid = self.session_id
        fresh = RiskDecision.objects.filter(session_id=sid, pk__gt=self.last_decision)
        reviewed = RiskDecision.objects.filter(
            pk__in=[pk for pk, s in self.review_status.items() if s == ReviewStatus.PENDING]
        ).exclude(review_status=ReviewStatus.PENDING)
        events = []
        for row in [*fresh.order_by("pk"), *reviewed]:
            self.last_decision = max(self.last_decision, row.pk)
            self.review_status[row.pk] = row.review_status
            if row.decision == Decision.ALLOW and row.review_status == ReviewStatus.NOT_NEEDED:
                continue  # the tool call event reports it
            events.append(
                DecisionEvent(
                    at=row.reviewed_at or row.created_at,
                    session=sid,
                    id=row.pk,
                    tool=row.tool,
                    decision=row.decision,
                    rule=row.rule,
                    reason=row.reason,
                    review_status=row.review_status,
                )
            )
        return events


def _plan_time(plan: Plan) -> datetime:
    if plan.accepted_at:  # accepted, or accepted and finished since
        return plan.accepted_at
    return plan.created_at if plan.status == PlanStatus.PROPOSED else timezone.now()


def _max(queryset: Any) -> int:
    return int(queryset.aggregate(top=Max("pk"))["top"] or 0)
