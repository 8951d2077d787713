"""Repo-specific evidence in one unit, normalised into fingerprints (pure: no database).

Three kinds, as DESIGN §7 names them:

- **verify-failure**: the first verify command that failed, with the first error line
  of its output, numbers, paths and hex stripped (so "line 12" and "line 14" match);
- **same-fix**: a verified unit's patch as the set of files it touched and its changed
  lines (hunk headers and their line numbers dropped);
- **command-sequence**: the ``run_command`` commands of a unit in order (two at least),
  each with whitespace collapsed and numbers and hex stripped; looking around (``ls``,
  ``cat``, ``git status`` …) is what every unit does, so it is left out.

Two units with the same fingerprint showed the same evidence; ``skill_proposals``
counts them.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from enum import StrEnum


class EvidenceKind(StrEnum):
    VERIFY_FAILURE = "verify-failure"
    SAME_FIX = "same-fix"
    COMMAND_SEQUENCE = "command-sequence"


@dataclass(frozen=True)
class Evidence:
    kind: EvidenceKind
    key: str  # the normalised evidence, readable
    command: str = ""  # verify-failure: the failing verify command
    error: str = ""  # verify-failure: its normalised first error line
    files: tuple[str, ...] = ()  # same-fix
    changes: tuple[str, ...] = field(default=(), repr=False)  # same-fix: "+line" / "-line"
    commands: tuple[str, ...] = ()  # command-sequence, normalised

    @property
    def fingerprint(self) -> str:
        return hashlib.sha256(f"{self.kind}\0{self.key}".encode()).hexdigest()


MIN_COMMANDS = 2  # one repeated command is not a procedure worth a skill
MAX_COMMANDS = 20
# Commands that only look around: in every unit of every repository, so no evidence.
LOOKING_AROUND = frozenset(
    {"ls", "cat", "head", "tail", "pwd", "echo", "find", "grep", "rg", "wc", "tree"}
    | {"less", "file", "stat", "which", "true"}
)
LOOKING_AROUND_GIT = frozenset(["status", "diff", "log", "show", "branch"])
MAX_CHANGES = 200  # changed lines kept of a same-fix patch
# "$ grep -q x f  [exit 1, 0.0 s]" — the header of each block of a verification report.
_HEADER = re.compile(r"^\$ (?P<command>.+?)  \[(?P<status>[^\]]*), [0-9.]+ s\]$")
_ERRORISH = re.compile(r"error|fail|exception|assert|traceback|not found|denied", re.I)
_HEX = re.compile(r"\b0x[0-9a-fA-F]+\b|\b[0-9a-f]{7,64}\b")
_PATH = re.compile(r"(?:[\w.~-]*/)+[\w.-]*")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_SPACE = re.compile(r"\s+")
_DIFF = re.compile(r"^diff --git a/(?P<path>.+?) b/")


def normalise(text: str, *, paths: bool = True, limit: int = 300) -> str:
    """``text`` without what differs between two runs of the same thing: hex ids,
    paths (``paths``) and numbers; whitespace collapsed."""
    text = _HEX.sub("<hex>", text)
    if paths:
        text = _PATH.sub("<path>", text)
    text = _NUMBER.sub("<n>", text)
    return _SPACE.sub(" ", text).strip()[:limit]


def verify_failure(report: str) -> Evidence | None:
    """The first failing command of a verification report (``Verification.report``)
    and its first error line. A command the gate refused is not evidence of the repo."""
    for command, status, output in _blocks(report):
        if status == "exit 0" or status.startswith("not run"):
            continue
        lines = [line.strip() for line in output if line.strip()]
        first = next((line for line in lines if _ERRORISH.search(line)), lines[0] if lines else "")
        error = normalise(first) or f"({status}, no output)"
        command = _SPACE.sub(" ", command).strip()
        return Evidence(
            EvidenceKind.VERIFY_FAILURE, f"{command}\n{error}", command=command, error=error
        )
    return None


def _blocks(report: str) -> list[tuple[str, str, list[str]]]:
    blocks: list[tuple[str, str, list[str]]] = []
    for line in report.splitlines():
        header = _HEADER.match(line)
        if header:
            blocks.append((header["command"], header["status"], []))
        elif blocks:
            blocks[-1][2].append(line)
    return blocks


def same_fix(patch: str) -> Evidence | None:
    """The files a patch touches and its changed lines, in order."""
    files: list[str] = []
    changes: list[str] = []
    for line in patch.splitlines():
        header = _DIFF.match(line)
        if header:
            files.append(header["path"])
        elif line.startswith(("+++", "---")):
            continue
        elif line.startswith(("+", "-")) and line[1:].strip():
            changes.append(line[0] + _SPACE.sub(" ", line[1:]).strip())
    if not files or not changes:
        return None
    files_key = tuple(sorted(set(files)))
    kept = tuple(changes[:MAX_CHANGES])
    key = "\n".join([*files_key, "", *kept])
    return Evidence(EvidenceKind.SAME_FIX, key, files=files_key, changes=kept)


def command_sequence(commands: list[str]) -> Evidence | None:
    """The unit's commands in order, repeats in a row counted once."""
    normalised: list[str] = []
    for command in commands:
        text = normalise(command, paths=False)
        if text and not looks_around(text) and (not normalised or normalised[-1] != text):
            normalised.append(text)
    if len(normalised) < MIN_COMMANDS:
        return None
    kept = tuple(normalised[:MAX_COMMANDS])
    return Evidence(EvidenceKind.COMMAND_SEQUENCE, "\n".join(kept), commands=kept)


def looks_around(command: str) -> bool:
    words = command.split()
    if not words:
        return True
    if words[0] == "git":
        return len(words) > 1 and words[1] in LOOKING_AROUND_GIT
    return words[0] in LOOKING_AROUND


def unit_evidence(
    *, verification_passed: bool | None, verification_output: str, patch: str, commands: list[str]
) -> list[Evidence]:
    """Every kind of evidence one unit shows: a failed verification, or the fix of a
    verified one, and its command sequence."""
    found: list[Evidence | None] = [command_sequence(commands)]
    if verification_passed is False:
        found.insert(0, verify_failure(verification_output))
    elif verification_passed:
        found.insert(0, same_fix(patch))
    return [evidence for evidence in found if evidence is not None]
