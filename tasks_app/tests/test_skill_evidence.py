"""Evidence normalised into fingerprints, and the skill drafted from it (no database)."""

from __future__ import annotations

import pytest

from skills_app.parsing import SkillInvalid
from tasks_app.features.skills.drafts import Occurrence, draft_validate, skill_draft
from tasks_app.features.skills.evidence import (
    EvidenceKind,
    command_sequence,
    same_fix,
    unit_evidence,
    verify_failure,
)

REPORT = (
    "$ ruff check .  [exit 0, 0.2 s]\nAll checks passed!\n\n"
    "$ pytest -q tests/test_a.py  [exit 1, {s} s]\n"
    "collected {n} items\n"
    "E   AssertionError: {n} != 13 in /tmp/pytest-{n}/repo/a.py:{n} at 0x7f{n}ab\n"
)
PATCH = (
    "diff --git a/src/app.py b/src/app.py\nindex 1a2b3c4..5d6e7f8 100644\n"
    "--- a/src/app.py\n+++ b/src/app.py\n@@ -{n},3 +{n},3 @@ def f():\n"
    "-    return x\n+    return  x or 0\n"
)


def test_the_same_failure_with_other_numbers_paths_and_hex_is_one_fingerprint() -> None:
    first = verify_failure(REPORT.format(s="1.5", n=12))
    second = verify_failure(REPORT.format(s="9.0", n=99))
    assert first is not None
    assert second is not None
    assert first.fingerprint == second.fingerprint
    assert first.command == "pytest -q tests/test_a.py"
    assert first.error == "E AssertionError: <n> != <n> in <path>:<n> at <hex>"


def test_another_command_or_error_is_another_fingerprint() -> None:
    base = verify_failure(REPORT.format(s="1", n=1))
    other_error = verify_failure(REPORT.format(s="1", n=1).replace("AssertionError", "KeyError"))
    assert base
    assert other_error
    assert base.fingerprint != other_error.fingerprint


def test_a_passing_or_refused_verification_is_no_failure_evidence() -> None:
    assert verify_failure("$ true  [exit 0, 0.0 s]\n") is None
    assert verify_failure("$ curl x  [not run: the gate says deny, 0.0 s]\nnot run") is None


def test_a_fix_ignores_hunk_line_numbers_and_whitespace() -> None:
    first, second = same_fix(PATCH.format(n=10)), same_fix(PATCH.format(n=80))
    assert first
    assert second
    assert first.fingerprint == second.fingerprint
    assert first.files == ("src/app.py",)
    assert first.changes == ("-return x", "+return x or 0")


def test_a_command_sequence_needs_two_commands_and_strips_numbers() -> None:
    assert command_sequence(["make test"]) is None
    assert command_sequence(["ls -la", "cat a", "git status", "git diff"]) is None
    one = command_sequence(["make   db", "make db", "pytest -x -n 4"])
    two = command_sequence(["make db", "pytest -x -n 2"])
    assert one
    assert two
    assert one.fingerprint == two.fingerprint
    assert one.commands == ("make db", "pytest -x -n <n>")


def test_a_unit_shows_its_failure_or_its_fix_and_its_commands() -> None:
    failed = unit_evidence(
        verification_passed=False,
        verification_output=REPORT.format(s="1", n=1),
        patch=PATCH.format(n=1),
        commands=["make db", "make test"],
    )
    assert [e.kind for e in failed] == [
        EvidenceKind.VERIFY_FAILURE,
        EvidenceKind.COMMAND_SEQUENCE,
    ]
    passed = unit_evidence(
        verification_passed=True, verification_output="", patch=PATCH.format(n=1), commands=[]
    )
    assert [e.kind for e in passed] == [EvidenceKind.SAME_FIX]


@pytest.mark.parametrize(
    "evidence",
    [
        verify_failure(REPORT.format(s="1", n=1)),
        same_fix(PATCH.format(n=1)),
        command_sequence(["make db", "pytest -q"]),
    ],
    ids=["verify-failure", "same-fix", "command-sequence"],
)
def test_every_draft_is_a_valid_skill_with_an_eval_case(evidence: object) -> None:
    assert evidence is not None
    occurrences = [Occurrence(i, "t", "it failed") for i in (1, 2, 3)]
    draft = skill_draft(evidence, occurrences)  # type: ignore[arg-type]
    draft_validate(draft)
    assert draft.skill_md.startswith(f"---\nname: {draft.name}\n")
    assert "model-invocable: true" in draft.skill_md
    assert "permission-profile: normal" in draft.skill_md
    assert draft.description.startswith("Use when")
    assert set(draft.eval_case) == {"case", "task.md", "grader.py"}
    compile(draft.eval_case["grader.py"], "grader.py", "exec")


def test_a_draft_sync_would_refuse_is_refused() -> None:
    evidence = command_sequence(["make db", "pytest -q"])
    assert evidence is not None
    draft = skill_draft(evidence, [Occurrence(1, "t", "x")])
    broken = draft.__class__(**{**draft.__dict__, "skill_md": "no frontmatter"})
    with pytest.raises(SkillInvalid, match="frontmatter"):
        draft_validate(broken)
