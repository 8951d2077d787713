"""A narrow skill drafted from repeated evidence: its SKILL.md and one eval case.

Pure except for ``draft_validate``, which writes the draft to a temporary folder and
reads it back with ``skills_app.parsing`` — the same reader sync uses — so a proposal
never holds a SKILL.md that sync would store as invalid.
"""

from __future__ import annotations

import json
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from skills_app.parsing import (
    CASE_GRADER,
    CASE_PROMPT,
    EVALS,
    PROJECT_SKILLS,
    SKILL_FILE,
    SkillInvalid,
    folder_digest,
    skill_parse,
)
from tasks_app.features.skills.evidence import Evidence, EvidenceKind

MAX_QUOTED = 4000  # characters of a patch or command list quoted in a body
NAME_PREFIX = {
    EvidenceKind.VERIFY_FAILURE: "fix",
    EvidenceKind.SAME_FIX: "change",
    EvidenceKind.COMMAND_SEQUENCE: "run",
}
CASE_NAME = {
    EvidenceKind.VERIFY_FAILURE: "repeated-failure",
    EvidenceKind.SAME_FIX: "repeated-fix",
    EvidenceKind.COMMAND_SEQUENCE: "repeated-commands",
}


@dataclass(frozen=True)
class Occurrence:
    unit_id: int
    task_key: str
    detail: str  # the unit's summary, or what it showed

    def as_dict(self) -> dict[str, object]:
        return {"unit": self.unit_id, "task": self.task_key, "detail": self.detail}


@dataclass(frozen=True)
class SkillDraft:
    name: str
    description: str
    skill_md: str
    case: str
    eval_case: dict[str, str]  # {"case": name, "task.md": …, "grader.py": …}

    @property
    def folder(self) -> str:
        return (PROJECT_SKILLS / self.name).as_posix()

    def paths(self) -> list[str]:
        """The three files the skill is: SKILL.md and its eval case's two."""
        case = f"{self.folder}/{EVALS}/{self.case}"
        return [f"{self.folder}/{SKILL_FILE}", f"{case}/{CASE_PROMPT}", f"{case}/{CASE_GRADER}"]

    def contents(self) -> dict[str, str]:
        skill, prompt, grader = self.paths()
        return {
            skill: self.skill_md,
            prompt: self.eval_case[CASE_PROMPT],
            grader: self.eval_case[CASE_GRADER],
        }


def slug(text: str, limit: int = 40) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:limit].strip("-") or "x"


def skill_name(evidence: Evidence) -> str:
    """``fix-<command>-<hash>``, ``change-<file>-<hash>`` or ``run-<command>-<hash>``:
    readable, and distinct per fingerprint (two fixes to one file are two skills)."""
    subject = {
        EvidenceKind.VERIFY_FAILURE: evidence.command,
        EvidenceKind.SAME_FIX: Path(evidence.files[0]).stem if evidence.files else "",
        EvidenceKind.COMMAND_SEQUENCE: evidence.commands[0] if evidence.commands else "",
    }[evidence.kind]
    return f"{NAME_PREFIX[evidence.kind]}-{slug(subject)}-{evidence.fingerprint[:6]}"


def skill_draft(evidence: Evidence, occurrences: list[Occurrence], *, fix: str = "") -> SkillDraft:
    """The SKILL.md and eval case for ``evidence`` seen in ``occurrences``.
    ``fix``: what made the failing command pass afterwards, when SF saw it."""
    name = skill_name(evidence)
    description, body, side_effects = _content(evidence, occurrences, fix)
    frontmatter = "\n".join(
        [
            "---",
            f"name: {name}",
            f"description: {json.dumps(description)}",  # a JSON string is YAML too
            "model-invocable: true",
            f"side-effects: {side_effects}",
            "permission-profile: normal",
            "---",
        ]
    )
    seen = "\n".join(
        f"- unit {o.unit_id} (task `{o.task_key}`): {o.detail[:200]}" for o in occurrences
    )
    evidence_md = f"## Evidence\n\nSF saw this in {len(occurrences)} units:\n\n{seen}\n"
    skill_md = f"{frontmatter}\n\n{body}\n\n{evidence_md}"
    case = CASE_NAME[evidence.kind]
    return SkillDraft(
        name=name,
        description=description,
        skill_md=skill_md,
        case=case,
        eval_case={"case": case, CASE_PROMPT: _prompt(evidence), CASE_GRADER: _grader(evidence)},
    )


def _content(evidence: Evidence, occurrences: list[Occurrence], fix: str) -> tuple[str, str, str]:
    """Description, body and side effects."""
    count = len(occurrences)
    if evidence.kind == EvidenceKind.VERIFY_FAILURE:
        known = f"\n\nWhat made it pass afterwards:\n\n{fix[:MAX_QUOTED]}" if fix else ""
        return (
            f"Use when `{evidence.command}` fails with “{evidence.error}” in this repository "
            f"(it failed that way in {count} units).",
            f"# When `{evidence.command}` fails\n\nThis verify command failed {count} times "
            f"with the same first error:\n\n    {evidence.error}\n\nRun `{evidence.command}` "
            f"yourself before finishing, read the whole output, and fix the cause it names "
            f"rather than the symptom.{known}",
            "code-edits",
        )
    if evidence.kind == EvidenceKind.SAME_FIX:
        files = ", ".join(f"`{path}`" for path in evidence.files)
        diff = "\n".join(evidence.changes)[:MAX_QUOTED]
        return (
            f"Use when changing {files[:600]}: the same fix was needed there in {count} units.",
            f"# The known fix to {files}\n\n{count} units made this same change; when the "
            f"task touches these files, check whether it is needed again:\n\n```diff\n{diff}\n```",
            "code-edits",
        )
    steps = "\n".join(f"{i}. `{c}`" for i, c in enumerate(evidence.commands, 1))[:MAX_QUOTED]
    return (
        f"Use when working in this repository needs `{evidence.commands[0][:200]}` and what "
        f"follows it: the same {len(evidence.commands)} commands ran in {count} units.",
        f"# The usual command sequence\n\n{count} units ran these commands in this order "
        f"(numbers stripped):\n\n{steps}\n\nRun them in this order instead of rediscovering it.",
        "none",
    )


def _prompt(evidence: Evidence) -> str:
    if evidence.kind == EvidenceKind.VERIFY_FAILURE:
        return (
            f"Make `{evidence.command}` pass in this repository. It kept failing with:\n\n"
            f"    {evidence.error}\n"
        )
    if evidence.kind == EvidenceKind.SAME_FIX:
        return f"Apply the repository's known fix to {', '.join(evidence.files)}.\n"
    return "Run the repository's usual command sequence and report what it printed.\n"


def _grader(evidence: Evidence) -> str:
    """A deterministic grader: exit 0 passes. Run in the trial's workspace."""
    if evidence.kind == EvidenceKind.SAME_FIX:
        lines = [c[1:] for c in evidence.changes if c.startswith("+")]
        check = (
            f"ADDED = {json.dumps(lines[:50])}\n"
            f"FILES = {json.dumps(list(evidence.files))}\n"
            "text = '\\n'.join(' '.join(Path(f).read_text().split()) for f in FILES "
            "if Path(f).is_file())\n"
            "missing = [line for line in ADDED if line not in text]\n"
            "print('\\n'.join(f'missing: {line}' for line in missing) or 'the fix is there')\n"
            "sys.exit(1 if missing else 0)\n"
        )
        header = (
            '"""Passes when the known fix is in place."""\nimport sys\nfrom pathlib import Path\n'
        )
        return f"{header}\n{check}"
    commands = [evidence.command] if evidence.command else list(evidence.commands)
    return (
        '"""Passes when the command(s) that kept coming up succeed in the workspace."""\n'
        "import subprocess\nimport sys\n\n"
        f"COMMANDS = {json.dumps(commands, indent=4)}\n\n"
        "for command in COMMANDS:\n"
        "    done = subprocess.run(command, shell=True, capture_output=True, text=True)\n"
        "    print(f'$ {command} [exit {done.returncode}]')\n"
        "    print((done.stdout + done.stderr)[-2000:])\n"
        "    if done.returncode != 0:\n"
        "        sys.exit(1)\n"
    )


def draft_validate(draft: SkillDraft) -> None:
    """Read the draft back as sync would; ``SkillInvalid`` names what is wrong."""
    with tempfile.TemporaryDirectory(prefix="sf-skill-draft-") as root:
        for relative, content in draft.contents().items():
            path = Path(root) / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content)
        folder = Path(root) / draft.folder
        digest, raw = folder_digest(folder)
        parsed = skill_parse(folder, digest=digest, raw=raw)
        problems = [parsed.problem] + [case.problem for case in parsed.cases]
        if parsed.meta is None or any(problems) or not parsed.cases:
            raise SkillInvalid("; ".join(p for p in problems if p) or "no eval case")
