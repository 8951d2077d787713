"""MCP tools in the permission gate: each risk class on the profile table, unclassed
tools asking, deny rules winning, allow rules and approvals lifting what they may."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agents_app.gate.mcp import mcp_offered
from agents_app.gate.policy import decide
from agents_app.gate.schemas import PolicyRules, Rule, ToolCall
from agents_app.tests.gate_helpers import context

TOOLS = {
    "mcp__tracker__lookup": "read",
    "mcp__tracker__create_item": "write",
    "mcp__tracker__notify": "external",
    "mcp__tracker__drop_all": "destructive",
    "mcp__tracker__mystery": "",
}
CALLS = {name: ToolCall(tool=name, input={"key": "a1"}) for name in TOOLS}

# tool → decision under restricted, normal, trusted, unrestricted (the module's table)
TABLE = {
    "mcp__tracker__lookup": ("allow", "allow", "allow", "allow"),
    "mcp__tracker__create_item": ("deny", "allow", "allow", "allow"),
    "mcp__tracker__notify": ("deny", "ask", "allow", "allow"),
    "mcp__tracker__drop_all": ("deny", "ask", "ask", "ask"),
    "mcp__tracker__mystery": ("ask", "ask", "ask", "ask"),
}
PROFILES = ("restricted", "normal", "trusted", "unrestricted")


@pytest.mark.parametrize("tool", list(TABLE))
@pytest.mark.parametrize("profile", PROFILES)
def test_each_risk_class_follows_the_profile_table(tmp_path: Path, tool: str, profile: str) -> None:
    decision = decide(CALLS[tool], context(tmp_path, profile, mcp_tools=TOOLS))
    assert decision.decision == TABLE[tool][PROFILES.index(profile)], decision
    assert decision.risk_class == f"mcp-{TOOLS[tool] or 'unclassed'}"


def test_the_restricted_profile_hides_what_it_can_never_allow(tmp_path: Path) -> None:
    assert mcp_offered("restricted", TOOLS) == ["mcp__tracker__lookup", "mcp__tracker__mystery"]
    assert mcp_offered("normal", TOOLS) == list(TOOLS)
    hidden = decide(
        CALLS["mcp__tracker__create_item"], context(tmp_path, "restricted", mcp_tools=TOOLS)
    )
    assert hidden.rule == "profile.restricted.tool-hidden"


def test_an_unclassed_tool_asks_and_says_why(tmp_path: Path) -> None:
    decision = decide(
        CALLS["mcp__tracker__mystery"], context(tmp_path, "unrestricted", mcp_tools=TOOLS)
    )
    assert (decision.decision, decision.rule) == ("ask", "mcp.unclassed")
    assert "no risk class in the project's policy" in decision.reason


def test_a_tool_not_of_this_unit_is_unknown(tmp_path: Path) -> None:
    call = ToolCall(tool="mcp__other__lookup", input={})
    assert decide(call, context(tmp_path, mcp_tools=TOOLS)).rule == "tool.unknown"


@pytest.mark.parametrize(
    "rule",
    [
        Rule(tool="*", pattern="mcp__tracker__*"),
        Rule(tool="mcp__tracker__*", pattern="*"),
        Rule(tool="*", pattern="a1"),  # an argument
    ],
    ids=["pattern-on-the-name", "glob-on-the-tool", "argument"],
)
def test_a_deny_rule_wins_over_every_class_and_profile(tmp_path: Path, rule: Rule) -> None:
    rules = PolicyRules(deny=[rule], allow=[Rule(pattern="mcp__tracker__lookup")])
    ctx = context(tmp_path, "unrestricted", mcp_tools=TOOLS, rules=rules)
    decision = decide(CALLS["mcp__tracker__lookup"], ctx)
    assert decision.decision == "deny"
    assert decision.rule.startswith("deny.project:")


def test_an_allow_rule_lifts_a_profile_ask_and_an_unclassed_ask(tmp_path: Path) -> None:
    rules = PolicyRules(allow=[Rule(pattern="mcp__tracker__notify"), Rule(pattern="*mystery")])
    ctx = context(tmp_path, "normal", mcp_tools=TOOLS, rules=rules)
    notify = decide(CALLS["mcp__tracker__notify"], ctx)
    assert (notify.decision, notify.rule) == ("allow", "allow.project:mcp__tracker__notify")
    assert decide(CALLS["mcp__tracker__mystery"], ctx).decision == "allow"


def test_an_allow_rule_never_lifts_a_destructive_tool(tmp_path: Path) -> None:
    rules = PolicyRules(allow=[Rule(pattern="mcp__tracker__*")])
    ctx = context(tmp_path, "unrestricted", mcp_tools=TOOLS, rules=rules)
    decision = decide(CALLS["mcp__tracker__drop_all"], ctx)
    assert (decision.decision, decision.rule) == ("ask", "harness.destructive.mcp")


def test_approvals_lift_the_exact_call_or_every_call_of_the_tool(tmp_path: Path) -> None:
    exact = Rule(tool="mcp__tracker__mystery", pattern='{"key":"a1"}', match="exact")
    ctx = context(tmp_path, "normal", mcp_tools=TOOLS, approved_rules=[exact])
    assert decide(CALLS["mcp__tracker__mystery"], ctx).decision == "allow"
    other = ToolCall(tool="mcp__tracker__mystery", input={"key": "b2"})
    assert decide(other, ctx).decision == "ask"  # another call of it still asks

    family = Rule(tool="mcp__tracker__mystery", pattern="mcp__tracker__mystery", match="family")
    ctx = context(tmp_path, "normal", mcp_tools=TOOLS, approved_rules=[family])
    assert decide(other, ctx).decision == "allow"


def test_only_an_exact_approval_lifts_a_destructive_call(tmp_path: Path) -> None:
    family = Rule(tool="mcp__tracker__drop_all", pattern="mcp__tracker__drop_all", match="family")
    exact = Rule(tool="mcp__tracker__drop_all", pattern='{"key":"a1"}', match="exact")
    call = CALLS["mcp__tracker__drop_all"]
    assert (
        decide(call, context(tmp_path, mcp_tools=TOOLS, approved_rules=[family])).decision == "ask"
    )
    assert (
        decide(call, context(tmp_path, mcp_tools=TOOLS, approved_rules=[exact])).decision == "allow"
    )


def test_manual_run_control_asks_before_an_allowed_side_effect(tmp_path: Path) -> None:
    ctx = context(tmp_path, "unrestricted", "manual", mcp_tools=TOOLS)
    assert decide(CALLS["mcp__tracker__lookup"], ctx).decision == "allow"  # a read
    write = decide(CALLS["mcp__tracker__create_item"], ctx)
    assert (write.decision, write.rule) == ("ask", "manual.side-effect")


@pytest.mark.django_db
def test_sf_gate_judges_an_mcp_tool_by_the_projects_policy(tmp_path: Path) -> None:
    from agents_app.models import Project
    from tests.cli import run_sf

    policy = {
        "mcp": {
            "servers": {"tracker": {"command": "tracker-mcp", "tools": {"lookup": "read"}}},
            "tools": {"mcp__docs__*": "external"},
        }
    }
    project = Project.objects.create(name="p", repo_path=str(tmp_path), policy=policy)

    def gate(tool: str, profile: str) -> dict[str, str]:
        code, out, err = run_sf(
            "gate", "--profile", profile, "--project", str(project.pk), "--tool", tool,
            "--input", '{"key": "a1"}', "--output-format", "json",
        )  # fmt: skip
        assert code == 0, err
        return dict(json.loads(out))

    assert gate("mcp__tracker__lookup", "restricted")["decision"] == "allow"
    assert gate("mcp__docs__post", "normal")["rule"] == "profile.normal.mcp-external"
    assert gate("mcp__tracker__other", "trusted")["rule"] == "mcp.unclassed"
