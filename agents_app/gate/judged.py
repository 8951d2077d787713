"""A command SF runs on a session's behalf — a plan's verify command, a project's hook —
judged by the permission gate as if an agent had asked for it with ``run_command``, and
the ``RiskDecision`` that judgement leaves.

One recorder for both: the verification (``tasks_app.engine.verification``) and the
project hooks (``agents_app.runtime.project_hooks``) had each a copy of it, and an audit
row that two copies write may drift apart (a field one of them forgets). Kept in the
gate layer, below the runtime and tasks_app, so both may import it.

Nobody waits on such a decision (a refused command does not run, and its caller says
so), so it is stored "not needed" for review, unless a person already approved it: an
``ask`` on a verify command of a plan they accepted is stored approved by them.
"""

from __future__ import annotations

from pathlib import Path

from django.contrib.auth.models import User
from django.utils import timezone

from agents_app.gate.normalize import normalize_input
from agents_app.gate.policy import decide
from agents_app.gate.redaction import redact_payload
from agents_app.gate.schemas import Decision, ToolCall
from agents_app.gate.session import gate_context, input_hash
from agents_app.models import AgentSession, ReviewStatus, RiskDecision
from sf_core.db import relaxed_commit

REFUSALS = {"deny": "denies it", "ask": "would ask a person first"}


def command_judged(
    session: AgentSession,
    command: str,
    *,
    worktree: Path,
    unit_id: int | None,
    why: str,
    approved_by: User | None = None,
    approval_note: str = "",
) -> Decision:
    """The gate's decision on ``command`` as ``run_command`` in ``worktree``, stored with
    its reason after ``why`` ("verify command", "hook lint"); an ``ask`` is stored
    approved by ``approved_by`` (with ``approval_note``) when a person is named."""
    call = ToolCall(tool="run_command", input={"command": command})
    verdict = decide(call, gate_context(session, worktree))
    normalized = normalize_input(call, worktree)
    review: dict[str, object] = {"review_status": ReviewStatus.NOT_NEEDED}
    if verdict.decision == "ask" and approved_by is not None:
        review = {
            "review_status": ReviewStatus.APPROVED,
            "reviewed_by": approved_by,
            "reviewed_at": timezone.now(),
            "review_note": approval_note,
        }
    with relaxed_commit():  # evidence, committed without waiting for the disk (sf_core.db)
        RiskDecision.objects.create(
            session=session,
            unit_id=unit_id,
            tool=call.tool,
            input_normalized=redact_payload(normalized),
            input_hash=input_hash(call.tool, normalized),
            risk_class=verdict.risk_class,
            decision=verdict.decision,
            rule=verdict.rule,
            reason=f"{why}: {verdict.reason}",
            **review,
            **session.axes.as_dict(),
        )
    return verdict


def refusal(verdict: Decision) -> str:
    """A refused command's reason in words ('' when the gate allows it)."""
    if verdict.decision == "allow":
        return ""
    return f"the permission gate {REFUSALS[verdict.decision]} ({verdict.rule}): {verdict.reason}"
