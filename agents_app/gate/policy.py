"""The permission gate (DESIGN §5): a pure decision on every tool call.

``decide(call, ctx)`` returns allow, ask or deny with the id of the rule that decided,
a risk class and one sentence for a person. Layers, in order:

1. Tool registry: a tool above the profile (``catalog.tools.tools_for_profile``) is denied.
2. Deny rules of the project's policy — deny always wins.
3. Each part of the call gets verdicts: built-in denies (``rm -rf /``, fork bombs, block
   devices), the safety harness (irreversible operations ask under every profile),
   opaque shell (never allowed), the profile table (each command family and each path
   has a floor: the lowest profile allowed without asking). A compound command takes the
   most severe verdict of its parts (deny > ask > allow).
4. Allow rules lift a profile refusal; approved rules (a person's session/project
   approvals) lift profile and harness asks. Neither lifts a deny rule, a built-in deny,
   a write outside the worktree below unrestricted, or an opaque command.
5. Under ``manual`` run control an allowed side effect still asks.

An MCP tool (``gate.mcp``) takes the same layers with its policy risk class in place of
the profile table's command families and paths.

Under ``restricted`` a profile refusal is a deny (read-only and explicitly allow-listed
actions); under the other profiles it is an ask. ``work_mode`` is carried for the audit
record only: the axes are independent, and the profile alone says what may proceed.
No database and no Django setup: only paths are looked at on disk (symlinks).
"""

from __future__ import annotations

from agents_app.axes import PermissionProfile, profile_rank
from agents_app.gate.catalog.tools import TOOLS
from agents_app.gate.judge_paths import PathJudge
from agents_app.gate.judge_shell import ShellJudge
from agents_app.gate.mcp import mcp_hidden, mcp_subjects, mcp_verdict, risk_class
from agents_app.gate.normalize import approval_subject, normalize_input
from agents_app.gate.paths import ResolvedPath, real_root, resolve_path
from agents_app.gate.rules import deny_rule, lift, manual
from agents_app.gate.schemas import Decision, GateContext, ToolCall
from agents_app.gate.verdicts import BadInput, Profile, Verdict, worst


def decide(call: ToolCall, ctx: GateContext) -> Decision:
    """Allow, ask or deny ``call`` in the session described by ``ctx``."""
    profile = PermissionProfile(ctx.permission_profile).value
    if call.tool in ctx.mcp_tools:
        return _mcp(call, ctx, profile)
    spec = TOOLS.get(call.tool)
    if spec is None:
        return _refusal("tool.unknown", f"There is no tool called {call.tool!r}.")
    if profile_rank(spec.min_profile) > profile_rank(profile):
        reason = f"{call.tool} is not offered under the {profile} profile."
        return _refusal(f"profile.{profile}.tool-hidden", reason)
    paths = PathJudge(Profile(profile), real_root(str(ctx.worktree)))
    subjects: list[str] = []  # what the deny rules are matched against
    try:
        verdicts = _judge(call, spec.side_effect, paths, subjects)
        if call.tool == "load_skill":
            verdicts = _skill_profile(call, ctx, profile) or verdicts
    except (ValueError, TypeError) as error:
        return _refusal("input.invalid", f"The {call.tool} input cannot be checked: {error}.")
    denied = deny_rule(ctx.rules.deny, call.tool, subjects)
    if denied is not None:
        return denied
    seen = ""  # the call as a reviewer saw it: only needed when there are approvals
    if ctx.approved_rules and any(v.decision == "ask" for v in verdicts):
        seen = approval_subject(call.tool, normalize_input(call, ctx.worktree))
    final = manual(worst([lift(v, ctx, call.tool, seen) for v in verdicts]), ctx)
    return Decision(
        decision=final.decision, rule=final.rule, risk_class=final.risk, reason=final.reason
    )


def _mcp(call: ToolCall, ctx: GateContext, profile: str) -> Decision:
    """An MCP tool: its policy risk class on the profile table (``gate.mcp``)."""
    risk = ctx.mcp_tools[call.tool]
    if mcp_hidden(risk, profile):
        reason = f"{call.tool} is not offered under the {profile} profile."
        return Decision(
            decision="deny",
            rule=f"profile.{profile}.tool-hidden",
            risk_class=risk_class(risk),
            reason=reason,
        )
    denied = deny_rule(ctx.rules.deny, call.tool, mcp_subjects(call.tool, call.input))
    if denied is not None:
        return denied
    verdict = mcp_verdict(call.tool, risk, profile)
    seen = ""
    if ctx.approved_rules and verdict.decision == "ask":
        seen = approval_subject(call.tool, normalize_input(call, ctx.worktree))
    final = manual(lift(verdict, ctx, call.tool, seen), ctx)
    return Decision(
        decision=final.decision, rule=final.rule, risk_class=final.risk, reason=final.reason
    )


def _judge(
    call: ToolCall, side_effect: str, paths: PathJudge, subjects: list[str]
) -> list[Verdict]:
    """The verdicts on one call; what its deny rules may match is added to ``subjects``."""
    if side_effect == "none":
        subjects += [v for v in call.input.values() if isinstance(v, str)]
        reason = f"{call.tool} has no side effect."
        return [Verdict("allow", "tool.no-side-effect", "none", reason)]
    if call.tool == "run_command":
        return ShellJudge(paths, subjects).command(call.input)
    return _file_tool(call, paths, subjects, write=side_effect == "write")


def _skill_profile(call: ToolCall, ctx: GateContext, profile: str) -> list[Verdict]:
    """A skill whose ``permission-profile`` is above the session's asks before it loads
    (under every profile: a person may approve it once, or raise the profile)."""
    name = call.input.get("name")
    if not isinstance(name, str):
        return []
    needed = ctx.skill_profiles.get(name)
    if needed is None or profile_rank(needed) <= profile_rank(profile):
        return []
    reason = f"Skill {name!r} needs the {needed} profile; this session is {profile}."
    return [Verdict("ask", "skill.profile-above", "skill", reason, lift="approved", subject=name)]


def _file_tool(
    call: ToolCall, paths: PathJudge, subjects: list[str], *, write: bool
) -> list[Verdict]:
    raw = call.input.get("path", "." if not write else None)
    if not isinstance(raw, str) or not raw or "\x00" in raw:
        raise BadInput("a path is required")
    resolved = resolve_path(raw, paths.root)
    subjects += [raw, resolved.path, *([resolved.relative] if resolved.relative else [])]
    subject = resolved.relative or resolved.path
    found: list[ResolvedPath | None] = [resolved]
    if call.tool == "glob":
        found.append(_glob_base(str(call.input.get("pattern", "")), resolved.path, paths.root))
    return [v for p in found for v in paths.path(p, write=write, subject=subject)]


def _glob_base(pattern: str, base: str, root: str) -> ResolvedPath | None:
    """Where a glob pattern can reach: its literal directory, or unknown after `..`."""
    cut = min((pattern.find(c) for c in "*?[{" if c in pattern), default=len(pattern))
    if ".." in pattern[cut:].split("/"):
        return None
    prefix = pattern[:cut].rsplit("/", 1)[0] if "/" in pattern[:cut] else ""
    return resolve_path(prefix or ".", root, cwd=base)


def _refusal(rule: str, reason: str) -> Decision:
    return Decision(decision="deny", rule=rule, risk_class="opaque", reason=reason)
