"""The project's allow and deny rules, a reviewer's approvals, and manual run control.

Allow rules lift a profile refusal; approved rules (a person's session or project
approvals) lift profile and harness asks. Neither lifts a deny rule, a built-in deny,
a write outside the worktree below unrestricted, or an opaque command. A deny rule
matches any of the call's subjects and always wins.
"""

from __future__ import annotations

from fnmatch import fnmatchcase

from agents_app.axes import RunControl
from agents_app.gate.schemas import Decision, GateContext, Rule
from agents_app.gate.verdicts import Verdict, short

_NO_SIDE_EFFECT = frozenset({"none", "read", "read-outside", "mcp-read"})


def lift(verdict: Verdict, ctx: GateContext, tool: str, call: str = "") -> Verdict:
    """Allow rules lift profile refusals; approvals also lift harness asks.

    ``call`` is the call as a reviewer saw it (``normalize.approval_subject``): an
    exact approval lifts every liftable ask of exactly that call; a family approval
    only the profile ask of a command of that family.
    """
    if verdict.decision == "allow" or not verdict.lift:
        return verdict
    if verdict.lift == "rule":
        for rule in ctx.rules.allow:
            if _matches(rule, tool, verdict.subject):
                return _allowed(verdict, f"allow.project:{_rule_key(rule)}", rule)
    if verdict.decision == "ask":
        for rule in ctx.approved_rules:
            if _approves(rule, tool, verdict, call):
                return _allowed(verdict, f"allow.approved:{_rule_key(rule)}", rule)
    return verdict


def _approves(rule: Rule, tool: str, verdict: Verdict, call: str) -> bool:
    """A reviewer's approval, read literally: never a wildcard (an approval stored
    before families existed, ``glob``, is read as ``exact``)."""
    if rule.tool != tool:
        return False
    if rule.match == "family":
        return bool(verdict.family) and verdict.lift == "rule" and verdict.family == rule.pattern
    return bool(call) and rule.pattern == call


def deny_rule(rules: list[Rule], tool: str, subjects: list[str]) -> Decision | None:
    """The decision of the first deny rule that matches one of ``subjects``, if any."""
    for rule in rules:
        if any(_matches(rule, tool, subject) for subject in subjects):
            reason = rule.reason or f"The project's policy denies {rule.pattern!r}."
            return Decision(
                decision="deny",
                rule=f"deny.project:{_rule_key(rule)}",
                risk_class="exec-destructive",
                reason=reason,
            )
    return None


def manual(verdict: Verdict, ctx: GateContext) -> Verdict:
    """Under manual run control a person drives every step that changes anything."""
    if RunControl(ctx.run_control) != RunControl.MANUAL or verdict.decision != "allow":
        return verdict
    if verdict.risk in _NO_SIDE_EFFECT:
        return verdict
    reason = "Under manual run control every side effect waits for a person."
    return Verdict("ask", "manual.side-effect", verdict.risk, reason)


def _allowed(verdict: Verdict, rule_id: str, rule: Rule) -> Verdict:
    if rule.match == "family":
        reason = f"A reviewer allowed `{rule.pattern} …` commands ({rule.reason or 'approved'})."
    else:
        reason = rule.reason or f"A rule allows `{short(verdict.subject)}`."
    return Verdict("allow", rule_id, verdict.risk, reason)


def _matches(rule: Rule, tool: str, subject: str) -> bool:
    """``rule.tool`` is a tool's name or a glob of names (``mcp__tracker__*``)."""
    return fnmatchcase(tool, rule.tool) and fnmatchcase(subject, rule.pattern)


def _rule_key(rule: Rule) -> str:
    pattern = f"{rule.pattern} …" if rule.match == "family" else rule.pattern
    return pattern if rule.tool in ("*", "run_command") else f"{rule.tool}:{pattern}"
