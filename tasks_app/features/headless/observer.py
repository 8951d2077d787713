"""Events from the database: what the engine did since the last look.

Headless watches a session the same way whether its units run inline in this
process or on Celery workers: by reading the rows the engine writes (transitions,
task transitions, units, traced tool calls, risk decisions, plans); so does the API's
event stream. Each ``poll`` returns the new events in time order. What has been
reported is an ``ObserverState`` (``cursor.py``): the API sends it with each event so a
client resumes where it stopped.

Within one poll the events of each log table keep the order of their rows, and the
tables are merged by time: so the state after any prefix of a poll's events is
exact (every row up to the last one reported was reported), which is what makes an
event's own id a safe place to resume from.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Iterable
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
from tasks_app.features.headless.cursor import Mark, ObserverState
from tasks_app.features.headless.events import (
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
from tasks_app.models import (
    FINISHED_PLAN_STATUSES,
    Plan,
    PlanStatus,
    Task,
    TaskTransition,
    Unit,
    UnitStatus,
)


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


Marked = tuple[Any, Mark]  # an event and the part of the state it moves


class Observer:
    """Remembers what it has reported (``state``); everything newer is an event."""

    def __init__(
        self, session_id: int, *, from_start: bool, state: ObserverState | None = None
    ) -> None:
        self.session_id = session_id
        self.state = state if state is not None else ObserverState(session=session_id)
        if state is None and not from_start:
            self._skip_history()

    def _skip_history(self) -> None:
        """A resumed session: report only what happens from now on."""
        sid, state = self.session_id, self.state
        state.transition = _max(ModeTransition.objects.filter(session_id=sid))
        state.task_transition = _max(TaskTransition.objects.filter(task__plan__session_id=sid))
        state.trace = _max(TraceEvent.objects.filter(session_id=sid))
        state.decision = _max(RiskDecision.objects.filter(session_id=sid))
        for unit in Unit.objects.filter(task__plan__session_id=sid).values("pk", "status"):
            state.units[unit["pk"]] = unit["status"]
        for plan in Plan.objects.filter(session_id=sid).values("pk", "status"):
            state.plans[plan["pk"]] = plan["status"]
        for row in RiskDecision.objects.filter(session_id=sid).values("pk", "review_status"):
            state.review_seen(row["pk"], row["review_status"])

    def poll(self) -> list[Any]:
        return [event for event, _ in self.poll_marked()]

    def poll_marked(self) -> list[Marked]:
        """The new events in time order, each with its mark. Log tables (transitions,
        task transitions, tool calls, new decisions) keep their row order; the rows
        whose status is reported (plans, units, reviews) are sorted by time first."""
        fresh, reviewed = self._decisions()
        streams: list[Iterable[Marked]] = [
            self._transitions(),
            _by_time(self._plans()),
            self._tasks(),
            _by_time(self._units()),
            self._tool_calls(),
            fresh,
            _by_time(reviewed),
        ]
        return list(heapq.merge(*streams, key=lambda marked: marked[0].at))

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

    def _transitions(self) -> list[Marked]:
        rows = ModeTransition.objects.filter(
            session_id=self.session_id, pk__gt=self.state.transition
        ).order_by("pk")
        events: list[Marked] = []
        for row in rows:
            self.state.transition = row.pk
            event = TransitionEvent(
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
            events.append((event, Mark("transition", row.pk)))
        return events

    def _plans(self) -> list[Marked]:
        events: list[Marked] = []
        for plan in Plan.objects.filter(session_id=self.session_id).order_by("pk"):
            if self.state.plans.get(plan.pk) == plan.status:
                continue
            self.state.plans[plan.pk] = plan.status
            event = PlanEvent(
                at=_plan_time(plan),
                session=self.session_id,
                id=plan.pk,
                status=plan.status,
                summary=plan.summary,
                tasks=plan.tasks.count(),
                reason=plan.status_reason,
            )
            events.append((event, Mark("plan", plan.pk, plan.status)))
        return events

    def _tasks(self) -> list[Marked]:
        rows = (
            TaskTransition.objects.filter(
                task__plan__session_id=self.session_id, pk__gt=self.state.task_transition
            )
            .select_related("task")
            .order_by("pk")
        )
        events: list[Marked] = []
        for row in rows:
            self.state.task_transition = row.pk
            event = TaskEvent(
                at=row.created_at,
                session=self.session_id,
                task=row.task.key,
                title=row.task.title,
                from_status=row.from_status,
                to_status=row.to_status,
                reason=row.reason,
                actor=row.actor_label,
            )
            events.append((event, Mark("task", row.pk)))
        return events

    def _units(self) -> list[Marked]:
        known = self.state.units
        rows = Unit.objects.filter(task__plan__session_id=self.session_id).select_related("task")
        events: list[Marked] = []
        for unit in rows.order_by("pk"):
            started = unit.pk not in known
            if not started and known[unit.pk] == unit.status:
                continue
            if started:
                events.append(self._unit_event(unit, UnitStatus.RUNNING, unit.started_at))
            if unit.status != UnitStatus.RUNNING:  # its end never before its start
                ended = max(unit.finished_at or timezone.now(), unit.started_at)
                events.append(self._unit_event(unit, unit.status, ended))
            known[unit.pk] = unit.status
        return events

    def _unit_event(self, unit: Unit, status: str, at: datetime | None) -> Marked:
        event = UnitEvent(
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
        return event, Mark("unit", unit.pk, status)

    def _tool_calls(self) -> list[Marked]:
        rows = TraceEvent.objects.filter(session_id=self.session_id, pk__gt=self.state.trace)
        events: list[Marked] = []
        for row in rows.order_by("pk"):
            self.state.trace = row.pk
            if row.kind != TraceKind.TOOL_CALL:
                continue
            output = str(row.payload.get("output", ""))
            event = ToolCallEvent(
                at=row.finished_at or row.started_at,
                session=self.session_id,
                unit=row.unit_id,
                tool=row.name,
                input_hash=row.input_hash,
                ok=not output.startswith("error:"),
            )
            events.append((event, Mark("trace", row.pk)))
        return events

    def _decisions(self) -> tuple[list[Marked], list[Marked]]:
        """New decisions (in row order), and reviews of those reported as pending."""
        sid, state = self.session_id, self.state
        fresh = RiskDecision.objects.filter(session_id=sid, pk__gt=state.decision).order_by("pk")
        reviewed = RiskDecision.objects.filter(pk__in=sorted(state.pending)).exclude(
            review_status=ReviewStatus.PENDING
        )
        new: list[Marked] = []
        for row in fresh:
            state.decision = row.pk
            state.review_seen(row.pk, row.review_status)
            if row.decision == Decision.ALLOW and row.review_status == ReviewStatus.NOT_NEEDED:
                continue  # the tool call event reports it
            new.append((_decision_event(row), Mark("decision", row.pk, row.review_status)))
        reviews: list[Marked] = []
        for row in reviewed.order_by("pk"):
            state.review_seen(row.pk, row.review_status)
            reviews.append((_decision_event(row), Mark("review", row.pk, row.review_status)))
        return new, reviews


def _decision_event(row: RiskDecision) -> DecisionEvent:
    return DecisionEvent(
        at=row.reviewed_at or row.created_at,
        session=row.session_id,
        id=row.pk,
        tool=row.tool,
        decision=row.decision,
        rule=row.rule,
        reason=row.reason,
        review_status=row.review_status,
    )


def _by_time(events: list[Marked]) -> list[Marked]:
    return sorted(events, key=lambda marked: marked[0].at)


def _plan_time(plan: Plan) -> datetime:
    """When the plan reached the status reported: proposed at creation, accepted at
    acceptance, finished when its work ended; other moves (rejected, superseded) have
    no time of their own and are reported when seen."""
    if plan.status in FINISHED_PLAN_STATUSES and plan.finished_at:
        return plan.finished_at
    if plan.accepted_at and plan.status != PlanStatus.PROPOSED:
        return plan.accepted_at
    return plan.created_at if plan.status == PlanStatus.PROPOSED else timezone.now()


def _max(queryset: Any) -> int:
    return int(queryset.aggregate(top=Max("pk"))["top"] or 0)
