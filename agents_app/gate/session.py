"""The permission gate in a running session: the pure decision (``gate.policy``) plus
what it needs from the database, and the ``RiskDecision`` audit row it leaves.

Every call is decided at invocation with the session's axes as they are at that
moment (steering may have changed them between tool calls), the project's allow
and deny rules, and the allow rules reviewers granted. An ``ask`` becomes a pending
approval; an approval with scope *once* lets exactly that call through, once.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.db import connection, transaction
from django.db.models import Q, QuerySet
from django.urls import reverse
from django.utils import timezone

import sf_native
from agents_app.axes import PermissionProfile, RunControl, WorkMode
from agents_app.gate.catalog.tools import tools_for_profile
from agents_app.gate.contract import GateVerdict, StaleReading
from agents_app.gate.mcp import mcp_offered
from agents_app.gate.normalize import normalize_input
from agents_app.gate.policy import Decision, decide
from agents_app.gate.redaction import redact_payload
from agents_app.gate.schemas import GateContext, PolicyRules, Rule, ToolCall
from agents_app.models import (
    AgentSession,
    ApprovalRule,
    Project,
    ReviewScope,
    ReviewStatus,
    RiskDecision,
)
from agents_app.models.sessions import reading_current
from agents_app.schemas import policy_parse
from sf_core.db import relaxed_commit, relaxed_insert
from sf_core.live import Groups, broadcast
from sf_core.notices import Notice, NoticeKind, notice_raise


def input_hash(tool: str, normalized: dict[str, Any]) -> str:
    return sf_native.canonical_hash({"tool": tool, "input": normalized})


def gate_rules(project: Project) -> PolicyRules:
    """The project policy's allow and deny rules, as the gate reads them (parsed once
    per policy: the same rules are read for every call of a unit)."""
    return _rules_of(json.dumps(project.policy, sort_keys=True))


@functools.lru_cache(maxsize=64)
def _rules_of(policy_json: str) -> PolicyRules:
    policy = policy_parse(json.loads(policy_json))
    return PolicyRules(
        allow=[Rule(tool=r.tool, pattern=r.pattern, reason=r.reason) for r in policy.allow],
        deny=[Rule(tool=r.tool, pattern=r.pattern, reason=r.reason) for r in policy.deny],
    )


def gate_context(
    session: AgentSession,
    worktree: Path,
    skill_profiles: dict[str, str] | None = None,
    mcp_tools: dict[str, str] | None = None,
) -> GateContext:
    # Not ``objects.none()``: iterating even an empty queryset compiles it (0.3 ms).
    granted: Any = ()
    if _may_hold_approvals(session):
        granted = ApprovalRule.objects.filter(project_id=session.project_id).filter(
            Q(scope=ReviewScope.PROJECT) | Q(session=session)
        )
    return GateContext(
        permission_profile=PermissionProfile(session.permission_profile),
        run_control=RunControl(session.run_control),
        work_mode=WorkMode(session.work_mode),
        worktree=worktree,
        rules=gate_rules(session.project),
        approved_rules=[
            Rule(
                tool=r.tool,
                pattern=r.pattern,
                reason=f"approved ({r.scope})",
                match="family" if r.match == "family" else "exact",
            )
            for r in granted
        ],
        skill_profiles={
            name: PermissionProfile(profile) for name, profile in (skill_profiles or {}).items()
        },
        mcp_tools=mcp_tools or {},
    )


def _may_hold_approvals(session: AgentSession) -> bool:
    """False only when the reading the session came from (the engine's dispatch point,
    ``session_read``'s ``gate_approvals``) found neither a once-approval nor a rule."""
    return bool(getattr(session, "gate_approvals", True))


@dataclass
class SessionGate:
    """The gate of one unit: reads fresh axes for every call and records every decision."""

    session_id: int
    worktree: Path
    unit_id: int | None = None
    skill_profiles: dict[str, str] = field(default_factory=dict)  # name → minimum profile
    # The unit's MCP tools and their policy risk classes ("" when none), ``gate.mcp``.
    mcp_tools: dict[str, str] = field(default_factory=dict)
    # Where the session row comes from. None: read from the database for every use. The
    # engine passes the reading its hooks took at this dispatch point (moments ago, after
    # applying the steering due there), so a tool call reads the row once, not four times.
    source: Callable[[], AgentSession] | None = None
    # Called when the source's reading turned out stale (``StaleReading``): the engine
    # reads afresh at the retried dispatch point. With it, on PostgreSQL, the source may
    # hand out one reading for many calls: each decision is stored only if the session
    # still reads as it did (``reading_current``), in the same statement.
    on_stale: Callable[[], None] | None = None
    # The session's activity while this gate's calls run ("": left alone), set in the
    # same statement as each decision.
    activity: str = ""

    @property
    def validates_readings(self) -> bool:
        """Whether each decision is stored only on a reading still current."""
        return self.on_stale is not None and connection.vendor == "postgresql"

    def session(self) -> AgentSession:
        if self.source is not None:
            return self.source()
        return AgentSession.objects.select_related("project").get(pk=self.session_id)

    def offered_tools(self) -> list[str]:
        """Layer 1: the tools the model is shown under the current profile."""
        profile = self.session().permission_profile
        return tools_for_profile(profile) + mcp_offered(profile, self.mcp_tools)

    def normalize(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return normalize_input(ToolCall(tool=tool, input=arguments), self.worktree)

    def check(self, tool: str, arguments: dict[str, Any], hashed: str) -> GateVerdict:
        """Layers 2 and 3: decide this call now, and store the decision."""
        session = self.session()
        normalized = self.normalize(tool, arguments)
        once = self._approved_once(session, tool, hashed)
        if once is not None:
            return GateVerdict(
                "allow", f"approved.once:{once}", "approved", "a reviewer approved this call"
            )
        verdict = decide(
            ToolCall(tool=tool, input=arguments),
            gate_context(session, self.worktree, self.skill_profiles, self.mcp_tools),
        )
        record = self._record(session, tool, normalized, hashed, verdict)
        return GateVerdict(
            verdict.decision, verdict.rule, verdict.risk_class, verdict.reason, record.pk
        )

    def _record(
        self,
        session: AgentSession,
        tool: str,
        normalized: dict[str, Any],
        hashed: str,
        verdict: Decision,
    ) -> RiskDecision:
        """Store the decision, before the call runs, committed without waiting for the
        disk (``sf_core.db``): in one statement with the activity (one round trip), or
        for an "ask" in one transaction with its notice. An "ask" ends the unit, and the
        task's transition after it is an ordinary commit, which flushes this one too."""
        record = RiskDecision(
            session=session,
            unit_id=self.unit_id,
            tool=tool,
            input_normalized=redact_payload(normalized),  # the hash is of the real input
            input_hash=hashed,
            risk_class=verdict.risk_class,
            decision=verdict.decision,
            rule=verdict.rule,
            reason=verdict.reason,
            review_status=ReviewStatus.PENDING
            if verdict.decision == "ask"
            else ReviewStatus.NOT_NEEDED,
            **session.axes.as_dict(),
        )
        if verdict.decision != "ask":
            self._store(session, record)
            return record
        with relaxed_commit():
            self._store(session, record)
            broadcast(
                Groups.APPROVALS,
                "approvals.changed",
                decision_id=record.pk,
                session_id=session.pk,
            )
            notice_raise(
                Notice(
                    kind=NoticeKind.APPROVAL_NEEDED,
                    dedupe_key=f"decision:{record.pk}",
                    project_id=session.project_id,
                    session_id=session.pk,
                    unit_id=self.unit_id,
                    text=f"{tool} needs approval ({verdict.risk_class}): {verdict.reason}",
                    url=reverse("approvals"),
                    payload={"decision_id": record.pk, "tool": tool, "rule": verdict.rule},
                )
            )
        return record

    def _check_current(self, session: AgentSession) -> None:
        """Raise ``StaleReading`` if ``session`` is a reading no longer current."""
        if not self.validates_readings:
            return
        current, params = reading_current(session.pk, session.dispatch_version)
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT {current}", params)
            row = cursor.fetchone()
        if not (row and row[0]):
            self._stale(session)

    def _stale(self, session: AgentSession) -> None:
        if self.on_stale is not None:
            self.on_stale()
        raise StaleReading(f"session {session.pk} changed since its reading")

    def _store(self, session: AgentSession, record: RiskDecision) -> None:
        """Insert ``record`` (and set the activity) if the reading it was decided on is
        still current; otherwise nothing is written and ``StaleReading`` raised."""
        if not self.validates_readings:
            with relaxed_commit():
                if self.activity:
                    AgentSession.objects.filter(pk=session.pk).exclude(
                        activity=self.activity
                    ).update(activity=self.activity)
                record.save(force_insert=True)
            return
        current, params = reading_current(session.pk, session.dispatch_version)
        prefix = f"WITH reading AS MATERIALIZED (SELECT {current} AS current)"
        prefix_params = list(params)
        if self.activity:
            prefix += (
                f", activity AS (UPDATE {AgentSession._meta.db_table} SET activity = %s"
                " WHERE id = %s AND activity <> %s AND (SELECT current FROM reading))"
            )
            prefix_params += [self.activity, session.pk, self.activity]
        stored = relaxed_insert(
            record,
            prefix=prefix,
            prefix_params=prefix_params,
            condition="(SELECT current FROM reading)",
        )
        if not stored:
            self._stale(session)

    def _approved_once(self, session: AgentSession, tool: str, hashed: str) -> int | None:
        """Consume an unused *once* approval of exactly this call, if there is one."""
        if not _may_hold_approvals(session):
            return None
        if not self._once_approvals(session).filter(tool=tool, input_hash=hashed).exists():
            return None  # nearly always; no transaction and no row lock to commit
        with transaction.atomic():
            approval = (
                self._once_approvals(session)
                .select_for_update(skip_locked=True)
                .filter(tool=tool, input_hash=hashed)
                .order_by("reviewed_at")
                .first()
            )
            if approval is None:
                return None
            self._check_current(session)  # the approval is used on a current reading only
            RiskDecision.objects.filter(pk=approval.pk).update(used_at=timezone.now())
            return approval.pk

    @staticmethod
    def _once_approvals(session: AgentSession) -> QuerySet[RiskDecision]:
        return RiskDecision.objects.filter(
            session=session,
            review_status=ReviewStatus.APPROVED,
            review_scope=ReviewScope.ONCE,
            used_at__isnull=True,
        )
