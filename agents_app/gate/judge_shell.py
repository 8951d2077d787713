"""Verdicts on a shell command: each command it runs, judged on its own.

``analyze`` lists the simple commands; the catalog classifies each (its family and
path operands). Every part gets the profile table's verdict for its family, the
harness and built-in verdicts its facts call for (``rm -rf /``, fork bombs, raised
privileges, unsafe environment variables), and the verdicts of ``PathJudge`` on its
operands and redirects. An opaque command is never allowed.
"""

from __future__ import annotations

import os
import re
import stat
from typing import Any, Literal

from agents_app.gate.catalog.builtins import loads_code
from agents_app.gate.catalog.classify import classify
from agents_app.gate.catalog.families import FAMILIES, Facts, approvable
from agents_app.gate.catalog.listing import listed_roots
from agents_app.gate.catalog.options import operands
from agents_app.gate.judge_paths import PathJudge
from agents_app.gate.normalize import collapse_whitespace
from agents_app.gate.paths import expand_home, resolve_path, within
from agents_app.gate.shell.analyze import analyze
from agents_app.gate.shell.commands import (
    NAMES_ASSIGNED_AT_RUN_TIME,
    PRIVILEGED_WRAPPERS,
    ShellAnalysis,
    SimpleCommand,
    Word,
)
from agents_app.gate.verdicts import BadInput, R, U, Verdict, builtin, harness, short

SAFE_ENV = frozenset(
    str.split(
        "LANG LANGUAGE TZ TERM COLUMNS LINES NO_COLOR FORCE_COLOR CLICOLOR CLICOLOR_FORCE CI DEBUG "
        "VERBOSE RUST_BACKTRACE RUST_LOG NODE_ENV PYTHONUNBUFFERED PYTHONDONTWRITEBYTECODE "
        "PYTHONHASHSEED PYTHONWARNINGS DJANGO_SETTINGS_MODULE DATABASE_URL REDIS_URL "
        "HYPOTHESIS_PROFILE CARGO_TERM_COLOR TMPDIR"
    )
)


_RUNS_PROJECT_CODE = frozenset({"build", "script"})
_PWD_EXPANSION = re.compile(r"\$PWD\b|\$\{PWD\}")
_SUBSTITUTION = re.compile(r"\$\(([^()`]*)\)|`([^`\\$()]*)`")


class ShellJudge:
    """The verdicts on one ``run_command`` call; what its deny rules may match goes to
    ``subjects`` (the whole command, and each part as written and as run)."""

    def __init__(self, paths: PathJudge, subjects: list[str]) -> None:
        self.profile = paths.profile
        self.paths = paths
        self.subjects = subjects

    def command(self, data: dict[str, Any]) -> list[Verdict]:
        """The verdicts on a ``run_command`` input (``command``, and ``cwd`` if given)."""
        command = data.get("command")
        if not isinstance(command, str):
            raise BadInput("a command string is required")
        if isinstance(data.get("cwd"), str):
            self.paths.cwds = [resolve_path(data["cwd"], self.paths.root).path]
        analysis = analyze(command)
        whole = collapse_whitespace(command)
        self.subjects.append(whole)
        self.paths.pwd_known = not NAMES_ASSIGNED_AT_RUN_TIME.search(command) and (
            "PWD" not in command or "PWD" not in _PWD_EXPANSION.sub("", command)
        )
        verdicts = self.opaque(analysis)
        facts = [classify(part) for part in analysis.commands]
        makers = [i for i, f in enumerate(facts) if f.links and self.makes_links(f)]
        for index, (part, part_facts) in enumerate(zip(analysis.commands, facts, strict=True)):
            self.subjects += [part.text, " ".join(part.argv), " ".join((part.name, *part.args))]
            other = next((j for j in makers if j != index), None)
            self.paths.after_links = analysis.commands[other].text if other is not None else ""
            verdicts += self.part(part, part_facts)
            self.paths.cwds = self.next_cwds(part)
        self.paths.after_links = analysis.commands[makers[0]].text if makers else ""
        attached = {r for part in analysis.commands for r in part.redirects}
        for redirect in analysis.redirects:
            if redirect.writes and redirect not in attached:  # `{ …; } > file`
                verdicts += self.paths.word(Word(redirect.target, redirect.dynamic), True, whole)
        verdicts += _pipe_to_shell(analysis, facts, whole)
        verdicts += _download_then_run(facts, whole)
        return verdicts or [Verdict("allow", "shell.empty", "none", "The command runs nothing.")]

    def opaque(self, analysis: ShellAnalysis) -> list[Verdict]:
        if not analysis.opaque:
            return []
        decision: Literal["ask", "deny"] = "deny" if self.profile.name == R else "ask"
        reason = f"The command cannot be checked: {analysis.reason}."
        return [Verdict(decision, f"opaque.{analysis.opaque_kind}", "opaque", reason)]

    def part(self, part: SimpleCommand, facts: Facts) -> list[Verdict]:
        """The verdicts on one simple command: its family, then what its facts imply."""
        subject = part.text
        risk, floor, what = FAMILIES[facts.family]
        what = f"`{short(subject)}` {what}" + (
            f" ({short(facts.detail, 40)})" if facts.detail else ""
        )
        key = approvable(part, facts)
        verdict = self.profile.floor(floor, facts.family, risk, what, subject)
        verdicts = [verdict.of_family(key) if key and verdict.lift else verdict]
        verdicts += [harness(facts.harness, subject)] if facts.harness else []
        if part.function and part.function == part.name:
            verdicts.append(builtin("fork-bomb", subject))
        if set(part.via) & PRIVILEGED_WRAPPERS:
            what = f"`{short(subject)}` runs with raised privileges"
            verdicts.append(self.profile.floor(U, "privileged", "exec-host", what, subject))
        unsafe = [name for name in part.assignments if not _safe_env(name)]
        if unsafe:
            verdicts.append(self.environment(unsafe, facts.family, subject, key))
        return verdicts + self.operands(part, facts) + self.where(part, facts)

    def environment(self, unsafe: list[str], family: str, subject: str, key: str) -> Verdict:
        """Variables the gate does not know: allowed on a program that runs the project's
        code anyway (`FOO=1 pytest`, `PYTHONPATH=src pytest` where pytest is allowed),
        never the ones that load code or choose programs (PATH, LD_PRELOAD, BASH_ENV …).
        PYTHONPATH is one of the former: on `pip list` it would run plans/sitecustomize.py."""
        loader = next((name for name in unsafe if loads_code(name)), "")
        if not loader and family in _RUNS_PROJECT_CODE:
            what = f"Setting {unsafe[0]} for `{short(subject)}`, which runs the project's code"
            found = self.profile.floor(FAMILIES[family][1], family, "exec-code", what, subject)
            return found.of_family(key) if key and found.lift else found
        name = loader or unsafe[0]
        what = f"Setting {name} can change what programs do"  # no family approval lifts it
        return self.profile.floor(U, "env-injection", "exec-code", what, subject)

    def makes_links(self, facts: Facts) -> bool:
        """Whether a command that may create symlinks does here: `mv a b` only moves a
        link when one of its sources is one (or is not known)."""
        return not facts.link_sources or not all(
            self.regular_file(word) for word in facts.link_sources
        )

    def regular_file(self, word: Word) -> bool:
        if word.dynamic or word.glob:
            return False
        for cwd in self.paths.cwds:
            if cwd is None:
                return False
            try:
                if not stat.S_ISREG(os.lstat(os.path.join(cwd, expand_home(word.value))).st_mode):
                    return False
            except (OSError, ValueError):
                return False
        return True

    def operands(self, part: SimpleCommand, facts: Facts) -> list[Verdict]:
        subject, found = part.text, []
        tree = {"recursive": facts.recursive, "deletes": facts.deletes}
        # find … -exec cat {}: each {} stands for every file under the roots.
        whole = facts.tree or any(v.startswith("find -") for v in part.via)
        for word in facts.reads:
            found += self.read(word, subject, whole)
        for word in facts.writes:
            found += self.paths.word(word, True, subject, **tree)
        if not facts.path_checked:  # an unknown command: its path-like operands at least
            for word in operands(part.words[1:]):
                found += self.paths.word(word, False, subject) if _path_like(word.value) else []
        if part.stdin_args:  # xargs: arguments read from standard input
            writes = bool(facts.writes) or facts.family == "write"
            roots = None if writes or part.via[-1:] != ("xargs",) else listed_roots(part.upstream)
            for root in roots or (Word("", dynamic=True),):
                found += self.paths.word(root, writes, subject, tree=True)
        for redirect in part.redirects:
            if redirect.writes or redirect.op == "<":
                found += self.paths.word(
                    Word(redirect.target, redirect.dynamic), redirect.writes, subject
                )
        return found

    def read(self, word: Word, subject: str, tree: bool = False) -> list[Verdict]:
        """A read operand; `$(git ls-files)` reads the names a lister prints."""
        inner = _SUBSTITUTION.fullmatch(word.value.strip('"')) if word.dynamic else None
        if inner is not None:
            listed = analyze(inner.group(1) or inner.group(2) or "")
            roots = None if listed.opaque else listed_roots(listed.commands)
            if roots is not None:
                judge = self.paths.word
                return [v for root in roots for v in judge(root, False, subject, tree=True)]
        return self.paths.word(word, False, subject, tree=tree)

    def where(self, part: SimpleCommand, facts: Facts) -> list[Verdict]:
        """A command that may run in a directory outside the worktree works outside it."""
        if facts.family in ("cwd", "variables", "network-read"):
            return []
        if all(cwd is not None and within(cwd, self.paths.root) for cwd in self.paths.cwds):
            return []
        what = f"`{short(part.text)}` may run outside the worktree"
        if facts.family in ("read", "git-read"):
            return [self.profile.floor(U, "read-outside", "read-outside", what, part.text)]
        return [self.profile.floor(U, "outside-cwd", "write-outside", what, part.text)]

    def next_cwds(self, part: SimpleCommand) -> list[str | None]:
        """Every directory the next command may run in (a `cd` adds one, never removes one)."""
        if part.name not in ("cd", "pushd", "popd"):
            return self.paths.cwds
        found = operands(part.words[1:])
        if part.name == "popd" or (found and (found[0].dynamic or found[0].value == "-")):
            added: list[str | None] = [None]
        elif not found:
            added = [os.path.expanduser("~")]
        else:
            resolved = [self.paths.resolve(found[0].value, cwd) for cwd in self.paths.cwds]
            added = [r.path if r else None for r in resolved]
        return list(dict.fromkeys([*self.paths.cwds, *added]))


def approval_family(command: str) -> str:
    """The one declared family the commands of ``command`` belong to (`pytest`), which
    a reviewer may approve instead of the exact command; "" when there is none."""
    analysis = analyze(command)
    if analysis.opaque:
        return ""
    keys = {approvable(part, classify(part)) for part in analysis.commands} - {""}
    return keys.pop() if len(keys) == 1 else ""


def _pipe_to_shell(analysis: ShellAnalysis, facts: list[Facts], subject: str) -> list[Verdict]:
    """curl … | sh: code fetched from the network and run at once."""
    fetches = any(f.family in ("network-read", "network-write") for f in facts)
    runs = analysis.opaque_kind == "stdin-program" or any(f.family == "inline-code" for f in facts)
    return [harness("pipe-to-shell", subject)] if fetches and runs else []


# Families that run a file: a script, a build (make reads its Makefile), an install.
_RUNS_FILES = frozenset({"script", "build", "install", "inline-code", "unknown"})


def _download_then_run(facts: list[Facts], subject: str) -> list[Verdict]:
    """`curl -o x.sh URL && sh x.sh`, a downloaded Makefile then `make`: a command that
    saves a download, then one that runs a file, in the same command line."""
    saved = next(
        (i for i, f in enumerate(facts) if f.family.startswith("network-") and f.writes), None
    )
    if saved is None or not any(f.family in _RUNS_FILES for f in facts[saved + 1 :]):
        return []
    return [harness("download-then-run", subject)]


def _path_like(value: str) -> bool:
    value = value.split("=", 1)[1] if value.startswith("-") and "=" in value else value
    return value.startswith(("/", "~", "../")) or value == ".." or "/../" in value


def _safe_env(name: str) -> bool:
    lowered = name.lower()
    if name == lowered:
        return not lowered.endswith("_proxy")  # shell variables, but not proxy settings
    return name in SAFE_ENV or name.startswith(("LC_", "SF_"))
