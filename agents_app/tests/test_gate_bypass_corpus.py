"""Every command in the bypass corpus is asked about or denied under `normal`."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agents_app.gate.policy import decide
from agents_app.gate.schemas import Decision, GateContext, Rule, ToolCall
from agents_app.tests.bypass_corpus import APPROVED, CORPUS, HARMLESS, ApprovedBypass, Bypass

SEVERITY = {"allow": 0, "ask": 1, "deny": 2}


def _call(entry: Bypass) -> ToolCall:
    if entry.tool == "run_command":
        return ToolCall(tool="run_command", input={"command": entry.command})
    data = {"path": entry.path, "content": "x", "old": "a", "new": "b"}
    if entry.pattern:
        data["pattern"] = entry.pattern
    return ToolCall(tool=entry.tool, input=data)


def _worktree(tmp_path: Path, entry: Bypass) -> Path:
    worktree = tmp_path / "wt"
    (worktree / "src").mkdir(parents=True)
    (worktree / "README.md").write_text("hello\n")
    for link, target in entry.links:
        os.symlink(os.path.expanduser(target), worktree / link)
    return worktree


def _decide(tmp_path: Path, entry: Bypass, approved: tuple[Rule, ...] = ()) -> Decision:
    ctx = GateContext(
        permission_profile=entry.profile,
        run_control="autonomous",
        work_mode="build",
        worktree=_worktree(tmp_path, entry),
        approved_rules=list(approved),
    )
    return decide(_call(entry), ctx)


def test_the_corpus_is_large_enough() -> None:
    assert len(CORPUS) >= 60
    assert len({(e.tool, e.command, e.path) for e in CORPUS}) == len(CORPUS)


@pytest.mark.parametrize("entry", CORPUS, ids=lambda e: (e.command or f"{e.tool} {e.path}")[:60])
def test_it_never_allows_a_known_bypass(tmp_path: Path, entry: Bypass) -> None:
    decision = _decide(tmp_path, entry)
    assert SEVERITY[decision.decision] >= SEVERITY[entry.minimum], (entry.why, decision)
    assert decision.reason


ORDINARY = (
    "ls -la src",
    "git status && git diff --stat",
    "grep -rn TODO src | head -20",
    "cat README.md",
    "mkdir -p src/pkg && touch src/pkg/__init__.py",
    "git add -A && git commit -m 'fix: handle empty input'",
    "curl -s https://example.org/api | jq .name",
)


@pytest.mark.parametrize("command", ORDINARY)
def test_ordinary_commands_in_the_same_worktree_are_allowed(tmp_path: Path, command: str) -> None:
    # The corpus passing must not come from a gate that refuses everything.
    decision = _decide(tmp_path, Bypass(command, "allow", "ordinary agent work"))
    assert decision.decision == "allow", decision


@pytest.mark.parametrize(("command", "profile"), HARMLESS, ids=lambda v: v[:50])
def test_harmless_commands_that_used_to_ask_are_allowed(
    tmp_path: Path, command: str, profile: str
) -> None:
    decision = _decide(tmp_path, Bypass(command, "allow", "harmless", profile=profile))
    assert decision.decision == "allow", decision


@pytest.mark.parametrize("entry", APPROVED, ids=lambda e: f"{e.approved} -> {e.command}"[:60])
@pytest.mark.parametrize("match", ["exact", "glob"])  # glob: as a rule stored before is read
def test_an_approval_never_lets_another_call_through(
    tmp_path: Path, entry: ApprovedBypass, match: str
) -> None:
    approved = (Rule(tool="run_command", pattern=entry.approved, match=match),)  # type: ignore[arg-type]
    twin = Bypass(entry.command, entry.minimum, entry.why)
    decision = _decide(tmp_path, twin, approved)
    assert SEVERITY[decision.decision] >= SEVERITY[entry.minimum], (entry.why, decision)
    # …while the exact call approved is let through (as long as nothing denies it).
    same = _decide(tmp_path / "same", Bypass(entry.approved, "allow", "approved"), approved)
    assert same.decision in ("allow", "deny"), same
