"""The permission gate: allow, deny and approved rules, and run control."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents_app.gate.policy import decide
from agents_app.gate.schemas import GateContext, PolicyRules, Rule, ToolCall
from agents_app.tests.gate_helpers import context, gate_worktree, read, shell, write


@pytest.fixture
def worktree(tmp_path: Path) -> Path:
    return gate_worktree(tmp_path)


# -- rules ---------------------------------------------------------------------------------------


def rules(allow: tuple[str, ...] = (), deny: tuple[str, ...] = (), tool: str = "*") -> PolicyRules:
    return PolicyRules(
        allow=[Rule(tool=tool, pattern=p) for p in allow],
        deny=[Rule(tool=tool, pattern=p) for p in deny],
    )


def test_a_deny_rule_wins_over_an_allow_rule(worktree: Path) -> None:
    ctx = context(worktree, rules=rules(allow=("rm *",), deny=("rm *",)))
    decision = decide(shell("rm src/a.py"), ctx)
    assert (decision.decision, decision.rule) == ("deny", "deny.project:rm *")


def test_a_deny_rule_wins_over_the_most_permissive_profile(worktree: Path) -> None:
    ctx = context(worktree, "unrestricted", rules=rules(deny=("ls*",)))
    assert decide(shell("ls -la"), ctx).decision == "deny"
    assert decide(shell("pwd"), ctx).decision == "allow"


def test_a_deny_rule_matches_wrapped_and_chained_parts(worktree: Path) -> None:
    ctx = context(worktree, "unrestricted", rules=rules(deny=("rm -rf*",)))
    for command in ("ls && sudo rm -rf /tmp/x", "/bin/rm -rf /tmp/x", "sh -c 'rm -rf /tmp/x'"):
        assert decide(shell(command), ctx).rule == "deny.project:rm -rf*", command


def test_a_deny_rule_on_paths(worktree: Path) -> None:
    ctx = context(worktree, rules=PolicyRules(deny=[Rule(tool="read_file", pattern="*.env")]))
    decision = decide(read(".env"), ctx)
    assert (decision.decision, decision.rule) == ("deny", "deny.project:read_file:*.env")
    assert decide(read("src/a.py"), ctx).decision == "allow"


def test_an_allow_rule_lifts_an_ask(worktree: Path) -> None:
    ctx = context(worktree, rules=rules(allow=("pytest*",)))
    decision = decide(shell("pytest -q"), ctx)
    assert (decision.decision, decision.rule) == ("allow", "allow.project:pytest*")


def test_an_allow_rule_only_lifts_the_parts_it_matches(worktree: Path) -> None:
    ctx = context(worktree, rules=rules(allow=("pytest*",)))
    assert decide(shell("pytest -q; make deploy"), ctx).decision == "ask"
    assert decide(shell("pytest -q; curl x | sh"), ctx).decision == "ask"


def test_an_allow_rule_lets_restricted_run_an_explicitly_listed_action(worktree: Path) -> None:
    ctx = context(worktree, "restricted", rules=rules(allow=("pytest*",)))
    assert decide(shell("pytest -q"), ctx).decision == "allow"
    assert decide(shell("make"), ctx).decision == "deny"


def test_an_allow_rule_never_lifts_a_write_outside_or_the_harness(worktree: Path) -> None:
    ctx = context(worktree, rules=rules(allow=("*",)))
    assert decide(write("../outside.py"), ctx).decision == "deny"
    assert decide(shell("git reset --hard"), ctx).decision == "ask"


def test_an_approved_rule_lifts_a_profile_ask_and_a_harness_ask(worktree: Path) -> None:
    approved = [Rule(tool="run_command", pattern="git push --force origin main", match="exact")]
    ctx = context(worktree, "unrestricted", approved_rules=approved)
    decision = decide(shell("git  push --force origin   main"), ctx)  # normalized alike
    assert (decision.decision, decision.rule) == (
        "allow",
        "allow.approved:git push --force origin main",
    )
    normal = context(worktree, approved_rules=[Rule(tool="run_command", pattern="git push")])
    assert decide(shell("git push"), normal).decision == "allow"


def test_an_approved_rule_never_turns_a_deny_into_allow(worktree: Path) -> None:
    approved = [Rule(pattern="*")]
    assert (
        decide(shell("pytest"), context(worktree, "restricted", approved_rules=approved)).decision
        == "deny"
    )
    assert (
        decide(
            shell("rm -rf /"), context(worktree, "unrestricted", approved_rules=approved)
        ).decision
        == "deny"
    )
    assert decide(write("/etc/x"), context(worktree, approved_rules=approved)).decision == "deny"


def test_an_approved_rule_is_for_its_tool_only(worktree: Path) -> None:
    approved = [Rule(tool="write_file", pattern="pytest"), Rule(pattern="pytest")]
    ctx = context(worktree, approved_rules=approved)
    assert decide(shell("pytest"), ctx).decision == "ask"


def test_no_rule_makes_an_opaque_command_allowed(worktree: Path) -> None:
    everything = [Rule(pattern="*")]
    ctx = context(
        worktree, "unrestricted", rules=PolicyRules(allow=everything), approved_rules=everything
    )
    for command in ('eval "$x"', "$CMD", "curl x | sh", "echo 'open"):
        assert decide(shell(command), ctx).decision == "ask", command
    restricted = context(worktree, "restricted", rules=PolicyRules(allow=everything))
    assert decide(shell("$CMD"), restricted).decision == "deny"


# -- run control ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        (shell("ls -la"), "allow"),
        (shell("git log"), "allow"),
        (read("src/a.py"), "allow"),
        (read("/etc/hostname"), "allow"),
        (ToolCall(tool="finish", input={"summary": "done"}), "allow"),
        (write("src/a.py"), "ask"),
        (shell("touch src/x"), "ask"),
        (shell("curl https://example.org"), "ask"),
        (shell("rm -rf /"), "deny"),
    ],
)
def test_manual_run_control_asks_for_every_side_effect(
    worktree: Path, call: ToolCall, expected: str
) -> None:
    decision = decide(call, context(worktree, "unrestricted", run="manual"))
    assert decision.decision == expected
    if expected == "ask":
        assert decision.rule == "manual.side-effect"


def test_assisted_run_control_does_not_ask_for_allowed_side_effects(worktree: Path) -> None:
    assert decide(write("src/a.py"), context(worktree, run="assisted")).decision == "allow"


def test_work_mode_does_not_change_a_decision(worktree: Path) -> None:
    calls = [write("src/a.py"), shell("pytest"), shell("git push")]
    for mode in ("chat", "plan", "review", "research"):
        ctx = GateContext(permission_profile="normal", run_control="autonomous", work_mode=mode,
                          worktree=worktree)  # fmt: skip
        assert [decide(c, ctx) for c in calls] == [decide(c, context(worktree)) for c in calls]
