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

Under ``restricted`` a profile refusal is a deny (read-only and explicitly allow-listed
actions); under the other profiles it is an ask. ``work_mode`` is carried for the audit
record only: the axes are independent, and the profile alone says what may proceed.
No database and no Django setup: only paths are looked at on disk (symlinks).
"""

from __future__ import annotations

import glob as globbing
import os
import re
import tempfile
from dataclasses import dataclass
from fnmatch import fnmatchcase
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agents_app.axes import PROFILE_ORDER, PermissionProfile, RunControl, WorkMode, profile_rank
from agents_app.gate.catalog.classify import classify
from agents_app.gate.catalog.families import FAMILIES, Facts
from agents_app.gate.catalog.options import operands
from agents_app.gate.catalog.tools import TOOLS
from agents_app.gate.shell.analyze import analyze
from agents_app.gate.shell.commands import (
    HARMLESS_TARGETS,
    PRIVILEGED_WRAPPERS,
    ShellAnalysis,
    SimpleCommand,
    Word,
)

R, N, T, U = PROFILE_ORDER  # restricted, normal, trusted, unrestricted

# Risk classes from the mildest; among verdicts of equal severity the riskier one decides.
RISK_ORDER = tuple(
    str.split(
        "none read read-outside write-worktree git-local exec-network exec-build install exec-code "
        "git-remote write-outside unknown exec-host opaque exec-destructive"
    )
)
_RISK_RANK = {risk: rank for rank, risk in enumerate(RISK_ORDER)}
_SEVERITY = {"allow": 0, "ask": 1, "deny": 2}
_NO_SIDE_EFFECT = frozenset({"none", "read", "read-outside"})

# Files a restricted session may write: its plans and notes, nothing the project runs.
PLANNING_ARTIFACTS = (".sf/*.md", ".sf/plans/*", "plans/*", "docs/plans/*", "PLAN.md")
SAFE_ENV = frozenset(
    str.split(
        "LANG LANGUAGE TZ TERM COLUMNS LINES NO_COLOR FORCE_COLOR CLICOLOR CLICOLOR_FORCE CI DEBUG "
        "VERBOSE RUST_BACKTRACE RUST_LOG NODE_ENV PYTHONUNBUFFERED PYTHONDONTWRITEBYTECODE "
        "PYTHONHASHSEED PYTHONWARNINGS PYTHONPATH DJANGO_SETTINGS_MODULE DATABASE_URL REDIS_URL "
        "PYTEST_ADDOPTS HYPOTHESIS_PROFILE CARGO_TERM_COLOR GOFLAGS TMPDIR"
    )
)
_SYSTEM: tuple[str, ...] = tuple(
    str.split(
        "/etc /boot /usr /bin /sbin /lib /lib32 /lib64 /libx32 /sys /proc /root /var/lib "
        "/var/spool/cron"
    )
)
# Under the home directory: what runs at log-in, and keys and credentials.
_STARTUP: tuple[str, ...] = tuple(
    str.split(
        ".ssh .bashrc .bash_profile .bash_login .profile .zshrc .zprofile .zshenv .gitconfig "
        ".config/git .npmrc .pypirc .netrc .aws .kube .docker .gnupg .config/autostart "
        ".config/systemd .local/bin"
    )
)
_BLOCK_DEVICE = re.compile(
    r"/dev/(sd|hd|vd|xvd|nvme|mmcblk|disk|md|dm-|loop|sr|mapper/|mem$|kmem$|port$)"
)
_HOME_WORD = re.compile(r"\"?\$(?:HOME|\{HOME\})\"?(/[^$`\"]*)?")
_GLOB_LIMIT = 200
_WILDCARD = re.compile(r"[*?\[]")
_WHOLE_ROOT = re.compile(r"[.*?\[\]!]*\*[.*?\[\]!]*")  # *, .*, .[!.]* …


class Rule(BaseModel):
    """An allow or deny rule: a glob on the command (run_command) or on the path."""

    model_config = ConfigDict(frozen=True)
    tool: str = "*"
    pattern: str
    reason: str | None = None


class PolicyRules(BaseModel):
    allow: list[Rule] = Field(default_factory=list)
    deny: list[Rule] = Field(default_factory=list)


class ToolCall(BaseModel):
    tool: str
    input: dict[str, Any] = Field(default_factory=dict)


class GateContext(BaseModel):
    permission_profile: PermissionProfile
    run_control: RunControl
    work_mode: WorkMode
    worktree: Path
    rules: PolicyRules = Field(default_factory=PolicyRules)
    approved_rules: list[Rule] = Field(default_factory=list)


class Decision(BaseModel):
    decision: Literal["allow", "ask", "deny"]
    rule: str
    risk_class: str
    reason: str


@dataclass(frozen=True, slots=True)
class ResolvedPath:
    raw: str
    path: str  # absolute, with `~`, `..` and symlinks resolved
    inside: bool  # inside the worktree (a symlink pointing out counts as outside)
    relative: str | None  # posix path from the worktree root when inside ("." for the root)


@dataclass(frozen=True, slots=True)
class _Verdict:
    decision: Literal["allow", "ask", "deny"]
    rule: str
    risk: str
    reason: str
    lift: str = ""  # "rule": allow and approved rules may lift it; "approved": only approvals
    subject: str = ""  # what a lifting rule is matched against


class _BadInput(ValueError):
    """The tool input is not what the tool takes: the call is denied."""


# -- public API ----------------------------------------------------------------------------------


def decide(call: ToolCall, ctx: GateContext) -> Decision:
    """Allow, ask or deny ``call`` in the session described by ``ctx``."""
    profile = PermissionProfile(ctx.permission_profile).value
    spec = TOOLS.get(call.tool)
    if spec is None:
        return _refusal("tool.unknown", f"There is no tool called {call.tool!r}.")
    if profile_rank(spec.min_profile) > profile_rank(profile):
        reason = f"{call.tool} is not offered under the {profile} profile."
        return _refusal(f"profile.{profile}.tool-hidden", reason)
    judge = _Judge(ctx, profile)
    try:
        verdicts = judge.call(call, spec.side_effect)
    except (ValueError, TypeError) as error:
        return _refusal("input.invalid", f"The {call.tool} input cannot be checked: {error}.")
    denied = _deny_rule(ctx.rules.deny, call.tool, judge.subjects)
    if denied is not None:
        return denied
    final = _manual(_worst([_lift(v, ctx, call.tool) for v in verdicts]), ctx)
    return Decision(
        decision=final.decision, rule=final.rule, risk_class=final.risk, reason=final.reason
    )


def resolve_path(path: str, worktree: Path | str, cwd: str | None = None) -> ResolvedPath:
    """Resolve ``~``, ``..``, relative and symlinked parts of ``path`` against the worktree.

    ``os.path.realpath`` follows every existing symlink (dangling ones too), so a link in
    the worktree that points elsewhere resolves to where a write would really land.
    """
    root = _real_root(str(worktree))
    expanded = os.path.expanduser(path) if path.startswith("~") else path
    full = os.path.realpath(os.path.join(cwd or root, expanded))
    inside = _within(full, root)
    relative = (full[len(root) :].lstrip(os.sep) or ".") if inside else None
    return ResolvedPath(path, full, inside, relative)


def normalize_input(call: ToolCall, worktree: Path | str | None = None) -> dict[str, Any]:
    """A stable form of the tool input for the audit record and its hash.

    Commands get their whitespace collapsed outside quotes; paths become worktree-relative
    when they are inside it (lexically: no symlink is followed, so the form is the same
    whatever is on disk).
    """
    data = dict(call.input)
    spec = TOOLS.get(call.tool)
    if call.tool == "run_command" and isinstance(data.get("command"), str):
        data["command"] = collapse_whitespace(data["command"])
    for key in spec.path_keys if spec else ():
        if isinstance(data.get(key), str):
            data[key] = _lexical_path(data[key], worktree)
    return data


def collapse_whitespace(command: str) -> str:
    """Runs of blanks outside quotes become one space; here-docs are left as written."""
    if "<<" in command:
        return command.strip()
    out: list[str] = []
    quote = ""
    escaped = pending = False
    for char in command.strip():
        if not (escaped or quote) and char in " \t":
            pending = True
            continue
        if pending and char != "\n" and out and out[-1] != "\n":
            out.append(" ")
        pending = False
        if escaped:
            escaped = False
        elif char == "\\" and quote != "'":
            escaped = True
        elif quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        out.append(char)
    return "".join(out)


# -- judging one call ------------------------------------------------------------------------------


class _Judge:
    """The verdicts on one call, and the strings its deny rules are matched against."""

    def __init__(self, ctx: GateContext, profile: str) -> None:
        self.ctx = ctx
        self.profile = profile
        self.root = _real_root(str(ctx.worktree))
        self.subjects: list[str] = []
        self.cwds: list[str | None] = [self.root]  # None: known only at run time

    def call(self, call: ToolCall, side_effect: str) -> list[_Verdict]:
        if side_effect == "none":
            self.subjects += [v for v in call.input.values() if isinstance(v, str)]
            reason = f"{call.tool} has no side effect."
            return [_Verdict("allow", "tool.no-side-effect", "none", reason)]
        if call.tool == "run_command":
            return self.command(call.input)
        return self.file_tool(call, write=side_effect == "write")

    def floor(self, floor: str, name: str, risk: str, what: str, subject: str) -> _Verdict:
        """Allowed from ``floor`` up; below it ask, or deny under restricted."""
        rule = f"profile.{self.profile}.{name}"
        if profile_rank(self.profile) >= profile_rank(floor):
            return _Verdict("allow", rule, risk, f"{what}; the {self.profile} profile allows it.")
        if self.profile == R:
            reason = f"{what}; the restricted profile does not allow it."
            return _Verdict("deny", rule, risk, reason, "rule", subject)
        reason = f"{what}; the {self.profile} profile asks first ({floor} allows it)."
        return _Verdict("ask", rule, risk, reason, "rule", subject)

    # -- file tools ----------------------------------------------------------------------------

    def file_tool(self, call: ToolCall, *, write: bool) -> list[_Verdict]:
        raw = call.input.get("path", "." if not write else None)
        if not isinstance(raw, str) or not raw or "\x00" in raw:
            raise _BadInput("a path is required")
        resolved = resolve_path(raw, self.root)
        self.subjects += [raw, resolved.path, *([resolved.relative] if resolved.relative else [])]
        subject = resolved.relative or resolved.path
        paths: list[ResolvedPath | None] = [resolved]
        if call.tool == "glob":
            paths.append(self.glob_base(str(call.input.get("pattern", "")), resolved.path))
        return [v for p in paths for v in self.path(p, write=write, subject=subject)]

    def glob_base(self, pattern: str, base: str) -> ResolvedPath | None:
        """Where a glob pattern can reach: its literal directory, or unknown after `..`."""
        cut = min((pattern.find(c) for c in "*?[{" if c in pattern), default=len(pattern))
        if ".." in pattern[cut:].split("/"):
            return None
        prefix = pattern[:cut].rsplit("/", 1)[0] if "/" in pattern[:cut] else ""
        return resolve_path(prefix or ".", self.root, cwd=base)

    # -- shell commands ------------------------------------------------------------------------

    def command(self, data: dict[str, Any]) -> list[_Verdict]:
        command = data.get("command")
        if not isinstance(command, str):
            raise _BadInput("a command string is required")
        if isinstance(data.get("cwd"), str):
            self.cwds = [resolve_path(data["cwd"], self.root).path]
        analysis = analyze(command)
        whole = collapse_whitespace(command)
        self.subjects.append(whole)
        verdicts = self.opaque(analysis)
        facts = [classify(part) for part in analysis.commands]
        for part, part_facts in zip(analysis.commands, facts, strict=True):
            self.subjects += [part.text, " ".join(part.argv), " ".join((part.name, *part.args))]
            verdicts += self.part(part, part_facts)
            self.cwds = self.next_cwds(part)
        attached = {r for part in analysis.commands for r in part.redirects}
        for redirect in analysis.redirects:
            if redirect.writes and redirect not in attached:  # `{ …; } > file`
                verdicts += self.word(Word(redirect.target, redirect.dynamic), True, whole)
        verdicts += _pipe_to_shell(analysis, facts, whole)
        return verdicts or [_Verdict("allow", "shell.empty", "none", "The command runs nothing.")]

    def opaque(self, analysis: ShellAnalysis) -> list[_Verdict]:
        if not analysis.opaque:
            return []
        decision: Literal["ask", "deny"] = "deny" if self.profile == R else "ask"
        reason = f"The command cannot be checked: {analysis.reason}."
        return [_Verdict(decision, f"opaque.{analysis.opaque_kind}", "opaque", reason)]

    def part(self, part: SimpleCommand, facts: Facts) -> list[_Verdict]:
        subject = part.text
        risk, floor, what = FAMILIES[facts.family]
        verdicts = [self.floor(floor, facts.family, risk, f"`{_short(subject)}` {what}", subject)]
        verdicts += [_harness(facts.harness, subject)] if facts.harness else []
        if part.function and part.function == part.name:
            verdicts.append(_builtin("fork-bomb", subject))
        if set(part.via) & PRIVILEGED_WRAPPERS:
            what = f"`{_short(subject)}` runs with raised privileges"
            verdicts.append(self.floor(U, "privileged", "exec-host", what, subject))
        unsafe = [name for name in part.assignments if not _safe_env(name)]
        if unsafe:
            what = f"Setting {unsafe[0]} can change what programs do"
            verdicts.append(self.floor(U, "env-injection", "exec-code", what, subject))
        return verdicts + self.operands(part, facts) + self.where(part, facts)

    def operands(self, part: SimpleCommand, facts: Facts) -> list[_Verdict]:
        subject, found = part.text, []
        tree = {"recursive": facts.recursive, "deletes": facts.deletes}
        for word in facts.reads:
            found += self.word(word, False, subject)
        for word in facts.writes:
            found += self.word(word, True, subject, **tree)
        if not facts.path_checked:  # an unknown command: its path-like operands at least
            for word in operands(part.words[1:]):
                found += self.word(word, False, subject) if _path_like(word.value) else []
        if part.stdin_args:  # xargs: arguments read from standard input
            unknown = Word("", dynamic=True)
            found += self.word(unknown, bool(facts.writes) or facts.family == "write", subject)
        for redirect in part.redirects:
            if redirect.writes or redirect.op == "<":
                found += self.word(
                    Word(redirect.target, redirect.dynamic), redirect.writes, subject
                )
        return found

    def where(self, part: SimpleCommand, facts: Facts) -> list[_Verdict]:
        """A command that may run in a directory outside the worktree works outside it."""
        if facts.family in ("cwd", "variables", "network-read"):
            return []
        if all(cwd is not None and _within(cwd, self.root) for cwd in self.cwds):
            return []
        what = f"`{_short(part.text)}` may run outside the worktree"
        if facts.family in ("read", "git-read"):
            return [self.floor(U, "read-outside", "read-outside", what, part.text)]
        return [self.floor(U, "outside-cwd", "write-outside", what, part.text)]

    def next_cwds(self, part: SimpleCommand) -> list[str | None]:
        """Every directory the next command may run in (a `cd` adds one, never removes one)."""
        if part.name not in ("cd", "pushd", "popd"):
            return self.cwds
        found = operands(part.words[1:])
        if part.name == "popd" or (found and (found[0].dynamic or found[0].value == "-")):
            added: list[str | None] = [None]
        elif not found:
            added = [os.path.expanduser("~")]
        else:
            resolved = [self.resolve(found[0].value, cwd) for cwd in self.cwds]
            added = [r.path if r else None for r in resolved]
        return list(dict.fromkeys([*self.cwds, *added]))

    def resolve(self, value: str, cwd: str | None) -> ResolvedPath | None:
        if cwd is None and not value.startswith(("/", "~")):
            return None
        return resolve_path(value, self.root, cwd)

    # -- paths ---------------------------------------------------------------------------------

    def word(
        self, word: Word, write: bool, subject: str, recursive: bool = False, deletes: bool = False
    ) -> list[_Verdict]:
        verdicts: list[_Verdict] = []
        for resolved in self.paths_of(word):
            verdicts += self.path(
                resolved, write=write, subject=subject, recursive=recursive, deletes=deletes
            )
        return verdicts

    def paths_of(self, word: Word) -> list[ResolvedPath | None]:
        """Where a path operand may point, for each possible working directory."""
        value = word.value
        if word.dynamic:
            # "$HOME/x" is as good as ~/x; anything else is known only at run time.
            home = _HOME_WORD.fullmatch(value)
            if not home:
                return [None]
            value = "~" + (home.group(1) or "")
        found: list[ResolvedPath | None] = []
        for cwd in self.cwds:
            literal = self.resolve(value, cwd)
            found.append(literal)
            if word.glob and literal is not None and literal.inside:
                found += self.glob_matches(value, cwd)
        return found

    def glob_matches(self, pattern: str, cwd: str | None) -> list[ResolvedPath | None]:
        """What a glob inside the worktree matches now: a matched symlink may point out.

        Outside the worktree the literal pattern decides and is never expanded; inside,
        deep patterns count as unknown so that the cost stays bounded.
        """
        if sum(1 for part in pattern.split("/") if _WILDCARD.search(part)) > 2:
            return [None]
        matches: list[ResolvedPath | None] = []
        for match in globbing.iglob(os.path.expanduser(pattern), root_dir=cwd):
            if len(matches) >= _GLOB_LIMIT:
                return [None]
            matches.append(resolve_path(match, self.root, cwd))
        return matches

    def path(
        self,
        resolved: ResolvedPath | None,
        *,
        write: bool,
        subject: str,
        recursive: bool = False,
        deletes: bool = False,
    ) -> list[_Verdict]:
        if not write:
            return [self.read(resolved, subject)]
        if resolved is not None and _harmless(resolved.raw):
            return []  # /dev/null, /dev/stdout …: written to, nothing changes
        found = _destruction(resolved, subject, recursive=recursive, deletes=deletes)
        return [*found, self.write(resolved, subject, deletes=deletes)]

    def read(self, resolved: ResolvedPath | None, subject: str) -> _Verdict:
        if resolved is None:
            what = f"`{_short(subject)}` reads a path known only at run time"
            return self.floor(U, "path-unknown", "read-outside", what, subject)
        if resolved.inside:
            what = f"Reading {resolved.relative} in the worktree"
            return self.floor(R, "read", "read", what, subject)
        what = f"Reading {resolved.path} (outside the worktree)"
        return self.floor(U, "read-outside", "read-outside", what, subject)

    def write(self, resolved: ResolvedPath | None, subject: str, *, deletes: bool) -> _Verdict:
        if resolved is None:
            what = f"`{_short(subject)}` writes to a path known only at run time"
            return self.floor(U, "path-unknown", "write-outside", what, subject)
        relative = resolved.relative
        # Deleting the worktree itself changes the directory that holds it.
        if relative is None or (deletes and relative == "."):
            return _outside_write(resolved.path, self.profile)
        if relative == ".git" or relative.startswith(".git/"):
            what = f"Writing {relative} (git's hooks and configuration)"
            return self.floor(U, "git-internals", "write-worktree", what, subject)
        if any(fnmatchcase(relative, pattern) for pattern in PLANNING_ARTIFACTS):
            what = f"Writing the planning artifact {relative}"
            return self.floor(R, "planning-artifact", "write-worktree", what, subject)
        what = f"Writing {relative} in the worktree"
        return self.floor(N, "write-worktree", "write-worktree", what, subject)


def _pipe_to_shell(analysis: ShellAnalysis, facts: list[Facts], subject: str) -> list[_Verdict]:
    """curl … | sh: code fetched from the network and run at once."""
    fetches = any(f.family in ("network-read", "network-write") for f in facts)
    runs = analysis.opaque_kind == "stdin-program" or any(f.family == "inline-code" for f in facts)
    return [_harness("pipe-to-shell", subject)] if fetches and runs else []


def _harmless(raw: str) -> bool:
    return raw in HARMLESS_TARGETS or raw.startswith("/dev/fd/")


def _path_like(value: str) -> bool:
    value = value.split("=", 1)[1] if value.startswith("-") and "=" in value else value
    return value.startswith(("/", "~", "../")) or value == ".." or "/../" in value


def _destruction(
    resolved: ResolvedPath | None, subject: str, *, recursive: bool, deletes: bool
) -> list[_Verdict]:
    """Built-in denies and harness asks: they hold whatever the profile."""
    if resolved is None:
        return [_harness("recursive-delete", subject)] if deletes and recursive else []
    found: list[_Verdict] = []
    if _BLOCK_DEVICE.match(resolved.path) or _BLOCK_DEVICE.match(resolved.raw):
        found.append(_builtin("block-device", subject))
    if recursive and _root_like(resolved.path):
        found.append(_builtin("recursive-root", subject))
    if deletes and recursive and _a_tree_that_matters(resolved):
        found.append(_harness("recursive-delete", subject))
    harness = "" if resolved.inside else _outside_harness(resolved.path)
    if harness:
        found.append(_harness(harness, subject))
    return found


def _a_tree_that_matters(resolved: ResolvedPath) -> bool:
    """Outside the temp directories; or the worktree itself, all of it, or its .git."""
    relative = resolved.relative
    if relative is None:
        return not _temporary(resolved.path)
    git = relative == ".git" or relative.startswith(".git/")
    return relative == "." or git or bool(_WHOLE_ROOT.fullmatch(relative))


def _outside_write(path: str, profile: str) -> _Verdict:
    """Writes outside the worktree: denied below unrestricted, whatever a rule says."""
    rule = f"profile.{profile}.write-outside"
    if profile == U:
        return _Verdict(
            "allow", rule, "write-outside", f"The unrestricted profile may write {path}."
        )
    reason = f"{path} is outside the worktree; the {profile} profile only writes inside it."
    return _Verdict("deny", rule, "write-outside", reason)


# -- places ----------------------------------------------------------------------------------------


def _outside_harness(path: str) -> str:
    if any(path == p or path.startswith(p + "/") for p in _SYSTEM):
        return "write-system"
    home = os.path.expanduser("~")
    if any(path == f"{home}/{p}" or path.startswith(f"{home}/{p}/") for p in _STARTUP):
        return "write-startup"
    return ""


def _root_like(path: str) -> bool:
    """/, a top-level directory, the home directory or its parent."""
    home = os.path.expanduser("~")
    return path.count("/") <= 1 or path in (home, os.path.dirname(home))


def _temporary(path: str) -> bool:
    return any(path.startswith(t + "/") for t in _temp_dirs())


@lru_cache(maxsize=1)
def _temp_dirs() -> tuple[str, ...]:
    return tuple({"/tmp", "/var/tmp", os.path.realpath(tempfile.gettempdir())})


@lru_cache(maxsize=64)
def _real_root(worktree: str) -> str:
    return os.path.realpath(worktree)


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _lexical_path(path: str, worktree: Path | str | None) -> str:
    expanded = os.path.expanduser(path) if path.startswith("~") else path
    if worktree is None:
        return os.path.normpath(expanded)
    root = os.path.normpath(os.path.abspath(str(worktree)))
    full = os.path.normpath(os.path.join(root, expanded))
    if full == root:
        return "."
    return full[len(root) + 1 :] if full.startswith(root + os.sep) else full


# -- verdicts, rules -------------------------------------------------------------------------------

_HARNESS = {
    "recursive-delete": "deletes a tree outside the worktree, or the worktree or its .git",
    "chmod-world-writable": "makes a whole tree writable by everyone",
    "git-push-force": "can overwrite history on the remote",
    "git-push-delete": "deletes a branch or tag on the remote",
    "git-reset-hard": "throws away uncommitted work",
    "git-clean": "deletes untracked files for good",
    "git-branch-delete": "deletes or force-moves a branch",
    "git-checkout-force": "throws away local changes",
    "git-stash-drop": "throws away stashed work",
    "git-reflog-expire": "removes the history that undo relies on",
    "git-tag-delete": "deletes a tag",
    "git-discard-changes": "throws away every uncommitted change",
    "write-system": "writes to the operating system's files",
    "write-startup": "writes to shell start-up, credential or key files",
    "disk": "formats or repartitions a disk",
    "database-drop": "drops or empties database data",
    "infra-destroy": "destroys infrastructure or containers",
    "power": "shuts down or restarts the machine",
    "kill-all": "kills every process it can",
    "crontab-remove": "removes every scheduled job",
    "shred": "overwrites files beyond recovery",
    "pipe-to-shell": "runs code fetched from the network",
}
_BUILTIN = {
    "recursive-root": "works recursively on /, the home directory or a top-level directory",
    "block-device": "writes to a disk device",
    "fork-bomb": "defines a function that calls itself (a fork bomb)",
}


def _harness(name: str, subject: str) -> _Verdict:
    reason = f"`{_short(subject)}` {_HARNESS[name]}; a person confirms it under every profile."
    return _Verdict(
        "ask", f"harness.destructive.{name}", "exec-destructive", reason, "approved", subject
    )


def _builtin(name: str, subject: str) -> _Verdict:
    reason = f"`{_short(subject)}` {_BUILTIN[name]}; this is never allowed."
    return _Verdict("deny", f"builtin.{name}", "exec-destructive", reason)


def _refusal(rule: str, reason: str) -> Decision:
    return Decision(decision="deny", rule=rule, risk_class="opaque", reason=reason)


def _manual(verdict: _Verdict, ctx: GateContext) -> _Verdict:
    """Under manual run control a person drives every step that changes anything."""
    if RunControl(ctx.run_control) != RunControl.MANUAL or verdict.decision != "allow":
        return verdict
    if verdict.risk in _NO_SIDE_EFFECT:
        return verdict
    reason = "Under manual run control every side effect waits for a person."
    return _Verdict("ask", "manual.side-effect", verdict.risk, reason)


def _lift(verdict: _Verdict, ctx: GateContext, tool: str) -> _Verdict:
    """Allow rules lift profile refusals; approvals also lift harness asks."""
    if verdict.decision == "allow" or not verdict.lift:
        return verdict
    if verdict.lift == "rule":
        for rule in ctx.rules.allow:
            if _matches(rule, tool, verdict.subject):
                return _allowed(verdict, f"allow.project:{_rule_key(rule)}", rule)
    if verdict.decision == "ask":
        for rule in ctx.approved_rules:
            if _matches(rule, tool, verdict.subject):
                return _allowed(verdict, f"allow.approved:{_rule_key(rule)}", rule)
    return verdict


def _allowed(verdict: _Verdict, rule_id: str, rule: Rule) -> _Verdict:
    reason = rule.reason or f"A rule allows `{_short(verdict.subject)}`."
    return _Verdict("allow", rule_id, verdict.risk, reason)


def _deny_rule(rules: list[Rule], tool: str, subjects: list[str]) -> Decision | None:
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


def _matches(rule: Rule, tool: str, subject: str) -> bool:
    return rule.tool in ("*", tool) and fnmatchcase(subject, rule.pattern)


def _rule_key(rule: Rule) -> str:
    return rule.pattern if rule.tool in ("*", "run_command") else f"{rule.tool}:{rule.pattern}"


def _worst(verdicts: list[_Verdict]) -> _Verdict:
    return max(verdicts, key=lambda v: (_SEVERITY[v.decision], _RISK_RANK[v.risk]))


def _safe_env(name: str) -> bool:
    lowered = name.lower()
    if name == lowered:
        return not lowered.endswith("_proxy")  # shell variables, but not proxy settings
    return name in SAFE_ENV or name.startswith(("LC_", "SF_"))


def _short(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
