"""The permission gate (DESIGN §5): a pure decision on every tool call.

``decide(call, ctx)`` returns allow, ask or deny with the id of the rule that decided,
a risk class and one sentence for a person. Layers, in order:

1. Tool registry: a tool above the profile (``tools_catalog.tools_for_profile``) is denied.
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

from agents_app.axes import PermissionProfile, RunControl, WorkMode, profile_rank
from agents_app.shell import PRIVILEGED_WRAPPERS, SimpleCommand, Word, analyze
from agents_app.tools_catalog import FAMILIES, TOOLS, Facts, classify, operands

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
_READING = frozenset({"read", "git-read", "cwd", "variables", "network-read"})
_GLOB_LIMIT = 200
_WILDCARD = re.compile(r"[*?\[]")


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
    pass


# -- public API -----------------------------------------------------------------------------


def decide(call: ToolCall, ctx: GateContext) -> Decision:
    """Allow, ask or deny ``call`` in the session described by ``ctx``."""
    profile = PermissionProfile(ctx.permission_profile).value
    spec = TOOLS.get(call.tool)
    if spec is None:
        return Decision(
            decision="deny",
            rule="tool.unknown",
            risk_class="opaque",
            reason=f"There is no tool called {call.tool!r}.",
        )
    if profile_rank(spec.min_profile) > profile_rank(profile):
        return Decision(
            decision="deny",
            rule=f"profile.{profile}.tool-hidden",
            risk_class="opaque",
            reason=f"{call.tool} is not offered under the {profile} profile.",
        )
    try:
        subjects, verdicts = _assess(call, spec.side_effect, ctx, profile)
    except (_BadInput, ValueError, TypeError) as error:
        return Decision(
            decision="deny",
            rule="input.invalid",
            risk_class="opaque",
            reason=f"The {call.tool} input cannot be checked: {error}.",
        )
    denied = _deny_rule(ctx.rules.deny, call.tool, subjects)
    if denied is not None:
        return denied
    final = _worst([_lift(v, ctx, call.tool) for v in verdicts])
    manual = RunControl(ctx.run_control) == RunControl.MANUAL
    if manual and final.decision == "allow" and final.risk not in _NO_SIDE_EFFECT:
        reason = "Under manual run control every side effect waits for a person."
        final = _Verdict("ask", "manual.side-effect", final.risk, reason)
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
    inside = full == root or full.startswith(root.rstrip(os.sep) + os.sep)
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
        plain = not (escaped or quote)
        if plain and char in " \t":
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


# -- assessing a call --------------------------------------------------------------------------


def _assess(
    call: ToolCall, side_effect: str, ctx: GateContext, profile: str
) -> tuple[list[str], list[_Verdict]]:
    """The strings deny rules are matched against, and the verdicts on each part."""
    if side_effect == "none":
        subjects = [str(v) for v in call.input.values() if isinstance(v, str)]
        return subjects, [
            _Verdict("allow", "tool.no-side-effect", "none", f"{call.tool} has no side effect.")
        ]
    if call.tool == "run_command":
        return _assess_command(call.input, ctx, profile)
    raw = call.input.get("path", "." if side_effect == "read" else None)
    if not isinstance(raw, str) or not raw or "\x00" in raw:
        raise _BadInput("a path is required")
    resolved = resolve_path(raw, ctx.worktree)
    subjects = [raw, resolved.path, *([resolved.relative] if resolved.relative else [])]
    subject = resolved.relative or resolved.path
    paths: list[ResolvedPath | None] = [resolved]
    if call.tool == "glob":
        paths.append(_glob_base(str(call.input.get("pattern", "")), resolved.path, ctx))
    write = side_effect == "write"
    verdicts = [v for p in paths for v in _path_verdicts(p, profile, write=write, subject=subject)]
    return subjects, verdicts


def _glob_base(pattern: str, base: str, ctx: GateContext) -> ResolvedPath | None:
    """Where a glob pattern can reach: its literal directory, or unknown after a `..`."""
    cut = min((pattern.find(c) for c in "*?[{" if c in pattern), default=len(pattern))
    if ".." in pattern[cut:].split("/"):
        return None
    prefix = pattern[:cut].rsplit("/", 1)[0] if "/" in pattern[:cut] else ""
    return resolve_path(prefix or ".", ctx.worktree, cwd=base)


def _assess_command(
    data: dict[str, Any], ctx: GateContext, profile: str
) -> tuple[list[str], list[_Verdict]]:
    command = data.get("command")
    if not isinstance(command, str):
        raise _BadInput("a command string is required")
    start = data.get("cwd")
    cwds: list[str | None] = [
        resolve_path(start, ctx.worktree).path
        if isinstance(start, str)
        else _real_root(str(ctx.worktree))
    ]
    analysis = analyze(command)
    subjects = [collapse_whitespace(command)]
    verdicts: list[_Verdict] = []
    if analysis.opaque:
        decision: Literal["ask", "deny"] = (
            "deny" if profile == PermissionProfile.RESTRICTED else "ask"
        )
        verdicts.append(
            _Verdict(
                decision,
                f"opaque.{analysis.opaque_kind}",
                "opaque",
                f"The command cannot be checked: {analysis.reason}.",
            )
        )
    all_facts = []
    for part in analysis.commands:
        facts = classify(part)
        all_facts.append(facts)
        subjects += [part.text, " ".join(part.argv), " ".join((part.name, *part.args))]
        verdicts += _part_verdicts(part, facts, ctx, profile, cwds)
        cwds = _next_cwds(part, cwds, ctx)
    attached = {r for part in analysis.commands for r in part.redirects}
    for redirect in analysis.redirects:
        if redirect.writes and redirect not in attached:
            word = Word(redirect.target, redirect.dynamic)
            verdicts += _word_verdicts(word, cwds, ctx, profile, write=True, subject=subjects[0])
    verdicts += _pipe_to_shell(analysis.opaque_kind, all_facts, subjects[0])
    if not verdicts:
        verdicts.append(_Verdict("allow", "shell.empty", "none", "The command runs nothing."))
    return subjects, verdicts


def _pipe_to_shell(opaque_kind: str, all_facts: list[Facts], subject: str) -> list[_Verdict]:
    """curl … | sh: code fetched from the network and run at once."""
    fetches = any(f.family in ("network-read", "network-write") for f in all_facts)
    runs = opaque_kind == "stdin-program" or any(f.family == "inline-code" for f in all_facts)
    if fetches and runs:
        return [_harness("pipe-to-shell", "runs code fetched from the network", subject)]
    return []


def _part_verdicts(
    part: SimpleCommand, facts: Facts, ctx: GateContext, profile: str, cwds: list[str | None]
) -> list[_Verdict]:
    subject = part.text
    verdicts = [_family_verdict(facts.family, profile, subject)]
    if facts.deny:
        verdicts.append(_builtin(facts.deny, subject))
    if facts.harness:
        verdicts.append(_harness(facts.harness, _HARNESS[facts.harness], subject))
    if part.function and part.function == part.name:
        verdicts.append(_builtin("fork-bomb", subject))
    if set(part.via) & PRIVILEGED_WRAPPERS:
        verdicts.append(
            _floor_verdict(
                profile,
                "unrestricted",
                "privileged",
                "exec-host",
                f"`{_short(subject)}` runs with raised privileges",
                subject,
            )
        )
    unsafe = [name for name in part.assignments if not _safe_env(name)]
    if unsafe:
        verdicts.append(
            _floor_verdict(
                profile,
                "unrestricted",
                "env-injection",
                "exec-code",
                f"Setting {unsafe[0]} can change what programs do",
                subject,
            )
        )
    verdicts += _operand_verdicts(part, facts, ctx, profile, cwds)
    if facts.family not in _READING and any(c is None or not _inside(c, ctx) for c in cwds):
        verdicts.append(
            _floor_verdict(
                profile,
                "unrestricted",
                "outside-cwd",
                "write-outside",
                f"`{_short(subject)}` may run outside the worktree",
                subject,
            )
        )
    return verdicts


def _operand_verdicts(
    part: SimpleCommand, facts: Facts, ctx: GateContext, profile: str, cwds: list[str | None]
) -> list[_Verdict]:
    subject = part.text
    found: list[_Verdict] = []

    def paths(words: tuple[Word, ...] | list[Word], write: bool) -> None:
        for word in words:
            found.extend(
                _word_verdicts(
                    word,
                    cwds,
                    ctx,
                    profile,
                    write=write,
                    subject=subject,
                    recursive=facts.recursive,
                    deletes=facts.deletes,
                )
            )

    paths(facts.reads, False)
    paths(facts.writes, True)
    if not facts.path_checked:
        paths([w for w in operands(part.words[1:]) if _path_like(w.value)], False)
    if part.stdin_args:
        unknown = Word("", dynamic=True)
        paths([unknown], bool(facts.writes) or facts.family == "write")
    for redirect in part.redirects:
        if redirect.writes or redirect.op == "<":
            paths([Word(redirect.target, redirect.dynamic)], redirect.writes)
    return found


def _path_like(value: str) -> bool:
    value = value.split("=", 1)[1] if value.startswith("-") and "=" in value else value
    return value.startswith(("/", "~", "../")) or value == ".." or "/../" in value


def _next_cwds(part: SimpleCommand, cwds: list[str | None], ctx: GateContext) -> list[str | None]:
    """Every directory the next command may run in (a `cd` adds one, never removes one)."""
    if part.name not in ("cd", "pushd", "popd"):
        return cwds
    found = operands(part.words[1:])
    if part.name == "popd" or (found and (found[0].dynamic or found[0].value == "-")):
        added: list[str | None] = [None]
    elif not found:
        added = [os.path.expanduser("~")]
    else:
        added = [_resolve_word(found[0].value, c, ctx) for c in cwds]
    return list(dict.fromkeys([*cwds, *added]))


def _resolve_word(value: str, cwd: str | None, ctx: GateContext) -> str | None:
    if cwd is None and not value.startswith(("/", "~")):
        return None
    return resolve_path(value, ctx.worktree, cwd).path


# -- paths ---------------------------------------------------------------------------------------


def _word_verdicts(
    word: Word,
    cwds: list[str | None],
    ctx: GateContext,
    profile: str,
    *,
    write: bool,
    subject: str,
    recursive: bool = False,
    deletes: bool = False,
) -> list[_Verdict]:
    verdicts: list[_Verdict] = []
    for resolved in _word_paths(word, cwds, ctx):
        verdicts += _path_verdicts(
            resolved, profile, write=write, subject=subject, recursive=recursive, deletes=deletes
        )
    return verdicts


def _word_paths(word: Word, cwds: list[str | None], ctx: GateContext) -> list[ResolvedPath | None]:
    """Where a path operand may point, for each possible working directory."""
    value = word.value
    if word.dynamic:
        # "$HOME/x" is as good as ~/x; anything else is known only at run time.
        home = re.fullmatch(r"\"?\$(?:HOME|\{HOME\})\"?(/[^$`\"]*)?", value)
        if not home:
            return [None]
        value = "~" + (home.group(1) or "")
    found: list[ResolvedPath | None] = []
    for cwd in cwds:
        if cwd is None and not value.startswith(("/", "~")):
            found.append(None)
            continue
        literal = resolve_path(value, ctx.worktree, cwd)
        found.append(literal)
        if word.glob and literal.inside:
            found += _glob_matches(value, cwd, ctx)
    return found


def _glob_matches(pattern: str, cwd: str | None, ctx: GateContext) -> list[ResolvedPath | None]:
    """What a glob inside the worktree matches now: a matched symlink may point out.

    Outside the worktree the literal pattern already decides, and it is never expanded
    there; inside, deep patterns count as unknown so that the cost stays bounded.
    """
    if sum(1 for part in pattern.split("/") if _WILDCARD.search(part)) > 2:
        return [None]
    matches: list[ResolvedPath | None] = []
    for match in globbing.iglob(os.path.expanduser(pattern), root_dir=cwd):
        if len(matches) >= _GLOB_LIMIT:
            return [None]
        matches.append(resolve_path(match, ctx.worktree, cwd))
    return matches


def _path_verdicts(
    resolved: ResolvedPath | None,
    profile: str,
    *,
    write: bool,
    subject: str,
    recursive: bool = False,
    deletes: bool = False,
) -> list[_Verdict]:
    if resolved is None:
        risk = "write-outside" if write else "read-outside"
        what = "writes to" if write else "reads"
        return [
            _floor_verdict(
                profile,
                "unrestricted",
                "path-unknown",
                risk,
                f"`{_short(subject)}` {what} a path known only at run time",
                subject,
            )
        ]
    if not write:
        if resolved.inside:
            return [
                _floor_verdict(
                    profile, "restricted", "read", "read", "reading the worktree", subject
                )
            ]
        return [
            _floor_verdict(
                profile,
                "unrestricted",
                "read-outside",
                "read-outside",
                f"Reading {resolved.path}, outside the worktree,",
                subject,
            )
        ]
    return _write_verdicts(resolved, profile, subject, recursive=recursive, deletes=deletes)


def _write_verdicts(
    resolved: ResolvedPath, profile: str, subject: str, *, recursive: bool, deletes: bool
) -> list[_Verdict]:
    path, relative = resolved.path, resolved.relative
    if deletes and relative == ".":
        relative = None  # deleting the worktree itself changes its parent directory
    verdicts: list[_Verdict] = []
    if _BLOCK_DEVICE.match(path) or _BLOCK_DEVICE.match(resolved.raw):
        verdicts.append(_builtin("block-device", subject))
    if recursive and _root_like(path):
        verdicts.append(_builtin("recursive-root", subject))
    if (
        deletes
        and recursive
        and (
            relative in (".", ".git")
            or (relative or "").startswith(".git/")
            or (relative is None and not _temporary(path))
        )
    ):
        verdicts.append(_harness("recursive-delete", _HARNESS["recursive-delete"], subject))
    if relative is None:
        harness = _outside_harness(path)
        if harness:
            verdicts.append(_harness(harness, _HARNESS[harness], subject))
        if profile != PermissionProfile.UNRESTRICTED:
            verdicts.append(
                _Verdict(
                    "deny",
                    f"profile.{profile}.write-outside",
                    "write-outside",
                    f"{path} is outside the worktree; the {profile} profile only writes inside it.",
                )
            )
        else:
            verdicts.append(
                _Verdict(
                    "allow",
                    f"profile.{profile}.write-outside",
                    "write-outside",
                    f"The unrestricted profile may write {path}.",
                )
            )
    elif relative == ".git" or relative.startswith(".git/"):
        verdicts.append(
            _floor_verdict(
                profile,
                "unrestricted",
                "git-internals",
                "write-worktree",
                f"Writing {relative}, where git keeps hooks and configuration,",
                subject,
            )
        )
    elif any(fnmatchcase(relative, pattern) for pattern in PLANNING_ARTIFACTS):
        verdicts.append(
            _floor_verdict(
                profile,
                "restricted",
                "planning-artifact",
                "write-worktree",
                f"Writing the planning artifact {relative}",
                subject,
            )
        )
    else:
        verdicts.append(
            _floor_verdict(
                profile,
                "normal",
                "write-worktree",
                "write-worktree",
                f"Writing {relative} in the worktree",
                subject,
            )
        )
    return verdicts


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


def _inside(path: str, ctx: GateContext) -> bool:
    root = _real_root(str(ctx.worktree))
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


def _family_verdict(family: str, profile: str, subject: str) -> _Verdict:
    risk, floor, what = FAMILIES[family]
    return _floor_verdict(profile, floor, family, risk, f"`{_short(subject)}` {what}", subject)


def _floor_verdict(
    profile: str, floor: str, name: str, risk: str, what: str, subject: str
) -> _Verdict:
    """Allowed from ``floor`` up; below it ask, or deny under restricted."""
    rule = f"profile.{profile}.{name}"
    if profile_rank(profile) >= profile_rank(floor):
        return _Verdict("allow", rule, risk, f"{what}; the {profile} profile allows it.")
    if profile == PermissionProfile.RESTRICTED:
        return _Verdict(
            "deny",
            rule,
            risk,
            f"{what}; the restricted profile does not allow it.",
            "rule",
            subject,
        )
    return _Verdict(
        "ask",
        rule,
        risk,
        f"{what}; the {profile} profile asks first ({floor} allows it).",
        "rule",
        subject,
    )


def _harness(name: str, what: str, subject: str) -> _Verdict:
    return _Verdict(
        "ask",
        f"harness.destructive.{name}",
        "exec-destructive",
        f"`{_short(subject)}` {what}; a person confirms it under every profile.",
        "approved",
        subject,
    )


def _builtin(name: str, subject: str) -> _Verdict:
    return _Verdict(
        "deny",
        f"builtin.{name}",
        "exec-destructive",
        f"`{_short(subject)}` {_BUILTIN[name]}; this is never allowed.",
    )


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
