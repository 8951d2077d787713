"""The gate and the tools on skills: a skill above the session's profile asks before it
loads, and a skill eval case's hidden answers are out of reach of every tool, under
every profile, whatever a rule says."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents_app.gate.normalize import approval_subject, normalize_input
from agents_app.gate.policy import decide
from agents_app.gate.schemas import PolicyRules, Rule, ToolCall
from agents_app.runtime.tools import TOOLS, ToolContext, ToolError
from agents_app.tests.gate_helpers import context, read, shell, write

HIDDEN = ".agents/skills/notes/evals/first/hidden"


@pytest.fixture
def worktree(tmp_path: Path) -> Path:
    root = tmp_path / "wt"
    hidden = root / HIDDEN
    hidden.mkdir(parents=True)
    (hidden / "answer.txt").write_text("THE-ANSWER\n")
    (root / ".agents/skills/notes/evals/first/task.md").write_text("write the notes\n")
    (root / "notes.md").write_text("nothing here\n")
    return root


def load(name: str) -> ToolCall:
    return ToolCall(tool="load_skill", input={"name": name})


@pytest.mark.parametrize(
    ("profile", "needed", "decision"),
    [
        ("restricted", "restricted", "allow"),
        ("normal", "trusted", "ask"),
        ("restricted", "normal", "ask"),
        ("trusted", "trusted", "allow"),
        ("unrestricted", "trusted", "allow"),
    ],
)
def test_a_skill_above_the_profile_asks(
    worktree: Path, profile: str, needed: str, decision: str
) -> None:
    ctx = context(worktree, profile, skill_profiles={"release": needed})
    verdict = decide(load("release"), ctx)
    assert verdict.decision == decision
    if decision == "ask":
        assert verdict.rule == "skill.profile-above"
        assert f"needs the {needed} profile" in verdict.reason


def test_an_approval_of_exactly_that_load_lifts_the_ask(worktree: Path) -> None:
    def approved(name: str) -> Rule:
        seen = approval_subject("load_skill", normalize_input(load(name), worktree))
        assert seen == f"skill {name}"
        return Rule(tool="load_skill", pattern=seen, reason="approved (session)", match="exact")

    needs = {"release": "trusted"}
    other = context(worktree, "normal", skill_profiles=needs, approved_rules=[approved("x")])
    assert decide(load("release"), other).decision == "ask"
    this = context(worktree, "normal", skill_profiles=needs, approved_rules=[approved("release")])
    assert decide(load("release"), this).decision == "allow"
    assert decide(load("unknown"), this).decision == "allow"  # the tool says it is unknown


@pytest.mark.parametrize("profile", ["restricted", "normal", "trusted", "unrestricted"])
@pytest.mark.parametrize(
    "call",
    [
        read(f"{HIDDEN}/answer.txt"),
        ToolCall(tool="list_dir", input={"path": HIDDEN}),
        ToolCall(tool="grep", input={"pattern": "ANSWER", "path": HIDDEN}),
        ToolCall(tool="glob", input={"pattern": "*", "path": HIDDEN}),
        write(f"{HIDDEN}/answer.txt"),
        shell(f"cat {HIDDEN}/answer.txt"),
        shell("cat .agents/skills/*/evals/*/hidden/answer.txt"),
        shell(f"cp {HIDDEN}/answer.txt out.txt"),
    ],
    ids=["read", "list", "grep", "glob", "write", "cat", "cat-glob", "cp"],
)
def test_hidden_eval_answers_are_denied_under_every_profile(
    worktree: Path, profile: str, call: ToolCall
) -> None:
    allow_all = Rule(tool=call.tool, pattern="*", reason="allow everything")
    ctx = context(worktree, profile, rules=PolicyRules(allow=[allow_all]))
    verdict = decide(call, ctx)
    assert verdict.decision == "deny", verdict
    assert verdict.rule == "builtin.eval-hidden"


def run(ctx: ToolContext, tool: str, **arguments: object) -> str:
    spec = TOOLS[tool]
    return spec.run(ctx, spec.parse(arguments))


def test_the_tools_themselves_never_show_hidden_answers(worktree: Path) -> None:
    """Past the gate (a bug there, a search from the root): still nothing."""
    ctx = ToolContext(worktree=worktree)
    skill = ".agents/skills/notes"
    assert run(ctx, "grep", pattern="THE-ANSWER|write", path=skill).count("task.md") == 1
    assert "THE-ANSWER" not in run(ctx, "grep", pattern="THE-ANSWER|write", path=skill)
    found = run(ctx, "glob", pattern="**/*", path=skill)
    assert "task.md" in found
    assert "answer.txt" not in found
    with pytest.raises(ToolError, match="hidden answers"):
        run(ctx, "read_file", path=f"{HIDDEN}/answer.txt")
    with pytest.raises(ToolError, match="hidden answers"):
        run(ctx, "list_dir", path=HIDDEN)


@pytest.mark.parametrize(
    ("profile", "decision"), [("restricted", "deny"), ("normal", "ask"), ("trusted", "allow")]
)
def test_a_skills_script_runs_only_as_the_gate_decides(
    worktree: Path, profile: str, decision: str
) -> None:
    """A skill's scripts/ are commands like any other: nothing runs them but run_command,
    which the gate decides and the sandbox confines."""
    script = ".agents/skills/notes/scripts/check.sh"
    (worktree / script).parent.mkdir(parents=True)
    (worktree / script).write_text("#!/bin/sh\necho ok\n")
    assert decide(shell(f"sh {script}"), context(worktree, profile)).decision == decision
