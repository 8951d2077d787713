"""Recording a unit's trace: ordered, redacted, streamed live to the unit page."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from django.db.models import Max
from django.utils import timezone

from agents_app.gate.redaction import redact_payload
from agents_app.models import AgentSession, CallStage, ModelCall, TraceEvent, TraceKind
from sf_core.db import relaxed_commit, relaxed_insert
from sf_core.live import Groups, broadcast

if TYPE_CHECKING:
    from agents_app.runtime.llm import ModelStep


@dataclass
class TraceRecorder:
    """Appends events to one unit's trace (or the session's, without a unit)."""

    session: AgentSession
    unit_id: int | None = None
    next_seq: int = 0

    def __post_init__(self) -> None:
        # A resumed unit continues its trace after the last recorded event.
        events = TraceEvent.objects.filter(session=self.session)
        events = events.filter(unit_id=self.unit_id or None)  # None: the planner's own trace
        last = events.aggregate(last=Max("seq"))["last"]
        self.next_seq = 0 if last is None else last + 1

    def record(
        self,
        kind: str,
        *,
        name: str = "",
        payload: dict[str, Any] | None = None,
        input_hash: str = "",
        tokens_in: int = 0,
        tokens_out: int = 0,
        cost: Decimal | float = 0,
        started_at: datetime | None = None,
    ) -> TraceEvent:
        # One statement, committed without waiting for the disk (``sf_core.db``).
        event = self._create(
            kind, name, payload, input_hash, tokens_in, tokens_out, cost, started_at
        )
        self.next_seq += 1
        if self.unit_id is not None:
            # No event id: the unit page re-renders its trace whatever was appended, so
            # updates still waiting to be sent are one (``sf_core.live`` coalesces
            # identical messages): a burst of tool calls costs the sender one send.
            broadcast(Groups.unit(self.unit_id), "trace.appended")
        return event

    def _create(
        self,
        kind: str,
        name: str,
        payload: dict[str, Any] | None,
        input_hash: str,
        tokens_in: int,
        tokens_out: int,
        cost: Decimal | float,
        started_at: datetime | None,
    ) -> TraceEvent:
        event = TraceEvent(
            session=self.session,
            unit_id=self.unit_id,
            seq=self.next_seq,
            kind=kind,
            name=name,
            payload=redact_payload(payload or {}),
            input_hash=input_hash,
            tokens_in=tokens_in,
            tokens_out=tokens_out,
            cost=Decimal(str(cost)),
            started_at=started_at or timezone.now(),
            finished_at=timezone.now(),
        )
        relaxed_insert(event)
        return event

    def model_call(
        self,
        step: ModelStep,
        *,
        payload: dict[str, Any],
        input_hash: str = "",
        started_at: datetime | None = None,
    ) -> TraceEvent:
        """A model call that completed: its trace event and its row of the cost ledger
        (``ModelCall``), written together so the ledger misses no call that was traced."""
        with relaxed_commit():
            return self._model_call(step, payload, input_hash, started_at)

    def _model_call(
        self,
        step: ModelStep,
        payload: dict[str, Any],
        input_hash: str,
        started_at: datetime | None,
    ) -> TraceEvent:
        event = self.record(
            TraceKind.MODEL_STEP,
            name=step.model,
            payload=payload,
            input_hash=input_hash,
            tokens_in=step.tokens_in,
            tokens_out=step.tokens_out,
            cost=step.cost,
            started_at=started_at,
        )
        ModelCall.objects.create(
            session=self.session,
            unit_id=self.unit_id,
            trace_event=event,
            stage=CallStage.UNIT if self.unit_id else CallStage.PLAN,
            model=step.model,
            tokens_in=step.tokens_in,
            tokens_out=step.tokens_out,
            cost=step.cost,
            priced=step.priced,
        )
        return event
