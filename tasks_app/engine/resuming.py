"""An approved call continues the work that waited for it (DESIGN §4, approvals).

A unit whose call waited for approval ends blocked and keeps its conversation and the
calls from the waiting one on (``Unit.resume_state``, from ``LoopResult.resume``). Once
a reviewer approves that decision, the task's next attempt does not start over: it
takes the conversation as it was, makes the approved call first (the gate finds the
approval and lets exactly that call run) and the calls after it, then goes on asking
the model. Its worktree is the one the blocked unit left, so the work so far is there.
A rejected (or still pending) decision gives no resumption: the next attempt starts
from the task's brief, as any retry does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agents_app.models import ReviewStatus, RiskDecision, TraceKind
from agents_app.runtime.llm import ToolCallRequest
from agents_app.runtime.trace import TraceRecorder
from tasks_app.models import Task, Unit, UnitStatus


@dataclass(frozen=True)
class Resumption:
    previous: Unit
    decision_id: int
    messages: list[dict[str, Any]]
    calls: list[ToolCallRequest]

    def note(self) -> str:
        names = ", ".join(call.name for call in self.calls)
        return (
            f"resumed from attempt {self.previous.attempt} at the call approved in decision "
            f"{self.decision_id} ({names}): its conversation and work go on"
        )


def resumption_of(task: Task, unit: Unit) -> Resumption | None:
    """How ``unit`` goes on from the attempt before it, if that one waits on an approved call."""
    previous = Unit.objects.filter(task=task, attempt__lt=unit.attempt).order_by("-attempt").first()
    if previous is None or previous.status != UnitStatus.BLOCKED:
        return None
    state = previous.resume_state or {}
    decision_id = state.get("decision_id")
    if not decision_id or not state.get("calls"):
        return None
    approved = RiskDecision.objects.filter(
        pk=decision_id, review_status=ReviewStatus.APPROVED
    ).exists()
    if not approved:
        return None
    calls = [ToolCallRequest(**call) for call in state["calls"]]
    return Resumption(previous, int(decision_id), list(state["messages"]), calls)


def resumption_record(resumed: Resumption, recorder: TraceRecorder) -> None:
    """Say on the new unit's trace where it goes on from."""
    recorder.record(
        TraceKind.NOTE,
        name="resumed",
        payload={"note": resumed.note(), "attempt": resumed.previous.attempt},
    )
