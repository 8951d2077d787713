"""Reviewing risk decisions: a person approves or rejects an ``ask``, with a scope.

*once* lets exactly that call through once; *session* and *project* write an allow
rule (the project one persists for every later session). Only an approver (or
admin) of the decision's project may review (``agents_app.access``; the old
``review_riskdecision`` permission no longer decides). Once a review commits,
``decision_reviewed`` is sent: the app built on this one unblocks the task that was
waiting on an approval, or leaves it blocked with the reason of a rejection.
"""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from agents_app.access import Action, may, require
from agents_app.gate.judge_shell import approval_family
from agents_app.gate.mcp import family_approvable
from agents_app.gate.normalize import approval_subject
from agents_app.models import ApprovalRule, Project, ReviewScope, ReviewStatus, RiskDecision
from sf_core.errors import InvalidTransition, SfError
from sf_core.live import Groups, broadcast
from sf_core.signals import decision_reviewed, send_on_commit


def may_review(user: User, project: Project | None = None) -> bool:
    """May ``user`` review decisions of ``project`` (of some project, without one)?"""
    return may(user, project, Action.APPROVE_DECISION)


def decision_review(
    *,
    decision: RiskDecision,
    reviewer: User,
    approve: bool,
    scope: str = ReviewScope.ONCE,
    note: str = "",
    match: str = "exact",
) -> RiskDecision:
    """Approve or reject a pending decision (a conditional update: reviewed once).

    ``match`` says what a session or project approval lets through later: ``exact``,
    this call as shown; ``family``, every command of the call's declared family
    (``approval_family``: `pytest …`), which the reviewer saw offered and chose.
    """
    require(reviewer, decision.session.project, Action.APPROVE_DECISION)
    if scope not in ReviewScope.values:
        raise SfError(f"unknown scope {scope!r}; accepted: {', '.join(ReviewScope.values)}")
    if match not in ("exact", "family"):
        raise SfError(f"unknown match {match!r}; accepted: exact, family")
    if approve and match == "family":
        if scope == ReviewScope.ONCE:
            raise SfError("a command family is approved for a session or a project, not once")
        if not decision_family(decision):
            raise SfError(f"decision {decision.pk} has no command family to approve")
    granted = match if approve else "exact"
    return _settle(
        decision, approve=approve, scope=scope, reviewer=reviewer, note=note, match=granted
    )


def decision_family(decision: RiskDecision) -> str:
    """The declared command family a reviewer may approve for this decision, or "".
    An MCP tool's family is the tool: every call of it (never a destructive one)."""
    if family_approvable(decision.tool, decision.risk_class):
        return decision.tool
    command = decision.input_normalized.get("command")
    if decision.tool != "run_command" or not isinstance(command, str):
        return ""
    return approval_family(command)


def decision_answer(*, decision: RiskDecision, approve: bool, source: str) -> RiskDecision:
    """Settle a pending decision from answers a person wrote down in advance for an
    unattended run (``sf headless --answers FILE``). Approval is *once*; the note
    names the answers file, and no reviewer is recorded."""
    return _settle(
        decision,
        approve=approve,
        scope=ReviewScope.ONCE,
        reviewer=None,
        note=f"pre-supplied answer from {source}",
    )


def _settle(
    decision: RiskDecision,
    *,
    approve: bool,
    scope: str,
    reviewer: User | None,
    note: str,
    match: str = "exact",
) -> RiskDecision:
    with transaction.atomic():
        updated = RiskDecision.objects.filter(
            pk=decision.pk, review_status=ReviewStatus.PENDING
        ).update(
            review_status=ReviewStatus.APPROVED if approve else ReviewStatus.REJECTED,
            review_scope=scope if approve else "",
            reviewed_by=reviewer,
            reviewed_at=timezone.now(),
            review_note=note,
        )
        if updated != 1:
            raise InvalidTransition(f"decision {decision.pk} is not pending review")
        decision.refresh_from_db()
        if approve and scope != ReviewScope.ONCE and reviewer is not None:
            _grant_rule(decision, reviewer, scope, match)
        broadcast(
            Groups.APPROVALS,
            "approvals.changed",
            decision_id=decision.pk,
            session_id=decision.session_id,
        )
        # The engine that waits on decisions is built on this app: it listens.
        send_on_commit(
            decision_reviewed, sender=RiskDecision, decision_id=decision.pk, approved=approve
        )
    return decision


def _grant_rule(decision: RiskDecision, reviewer: User, scope: str, match: str) -> None:
    """The allow rule of a session or project approval: the call exactly as shown
    (never a glob: a `*` in the command is a `*`), or the family the reviewer chose."""
    if match == "family":
        pattern = decision_family(decision)
    else:
        pattern = approval_subject(decision.tool, decision.input_normalized)
    if not pattern or len(pattern) > 500:
        # Nothing to match later (a cut pattern would match another, shorter command):
        # the approval lets this call through only.
        return
    ApprovalRule.objects.create(
        project_id=decision.session.project_id,
        session=decision.session if scope == ReviewScope.SESSION else None,
        scope=scope,
        tool=decision.tool,
        match=match,
        pattern=pattern,
        granted_by=reviewer,
        granted_from=decision,
    )
