"""Verdicts on the paths a call reads and writes (file tools, operands, redirects).

Reading is allowed inside the worktree from ``restricted``; writing from ``normal``
(planning artifacts from ``restricted``, git's internals only ``unrestricted``); a
write outside the worktree is denied below ``unrestricted`` whatever a rule says.
Deleting or working recursively on a tree that matters asks a person, and on ``/`` or
a disk device is never allowed. Only paths are looked at on disk (symlinks, globs).
"""

from __future__ import annotations

import glob as globbing
import os
import re
from fnmatch import fnmatchcase

from agents_app.gate.paths import (
    ResolvedPath,
    expand_home,
    outside_harness,
    resolve_path,
    root_like,
    temporary,
)
from agents_app.gate.shell.commands import HARMLESS_TARGETS, Word
from agents_app.gate.verdicts import N, Profile, R, U, Verdict, builtin, harness, short

# Files a restricted session may write: its plans and notes, nothing the project runs.
PLANNING_ARTIFACTS = (".sf/*.md", ".sf/plans/*", "plans/*", "docs/plans/*", "PLAN.md")
_BLOCK_DEVICE = re.compile(
    r"/dev/(sd|hd|vd|xvd|nvme|mmcblk|disk|md|dm-|loop|sr|mapper/|mem$|kmem$|port$)"
)
# "$HOME/x", $PWD, "${PWD}"/src …: the quotes are dropped first.
_VARIABLE_WORD = re.compile(r"\$(?:(HOME|PWD)|\{(HOME|PWD)\})(/[^$`\\]*)?")
_GLOB_LIMIT = 200
_WILDCARD = re.compile(r"[*?\[]")
_WHOLE_ROOT = re.compile(r"[.*?\[\]!]*\*[.*?\[\]!]*")  # *, .*, .[!.]* …


class PathJudge:
    """Where a path operand may point, and the verdicts on reading or writing it there.

    ``cwds`` lists every directory the command being judged may run in (a ``cd`` earlier
    in a compound command adds one; None: known only at run time).
    """

    def __init__(self, profile: Profile, root: str) -> None:
        self.profile = profile
        self.root = root
        self.cwds: list[str | None] = [root]
        self.pwd_known = True  # nothing in the command assigns PWD: "$PWD" is the cwd
        self.after_links = ""  # a command of the same line that may create symlinks

    def resolve(self, value: str, cwd: str | None) -> ResolvedPath | None:
        if cwd is None and not value.startswith(("/", "~")):
            return None
        return resolve_path(value, self.root, cwd)

    def word(
        self,
        word: Word,
        write: bool,
        subject: str,
        recursive: bool = False,
        deletes: bool = False,
        tree: bool = False,
    ) -> list[Verdict]:
        """The verdicts on reading (or writing) the path operand ``word``; ``tree``: the
        command reads everything under it (grep -r, rg, cp -r, find -exec cat {})."""
        verdicts: list[Verdict] = []
        if word.stream:
            return verdicts  # <(…) is a pipe; the commands inside are judged on their own
        for resolved in self.paths_of(word):
            if tree and not write and resolved is not None and self.holds_hidden(resolved):
                reason = f"`{short(subject)}` reads a tree that holds a skill eval's hidden answers"
                verdicts.append(Verdict("deny", "builtin.eval-hidden", "eval-hidden", reason))
            verdicts += self.path(
                resolved, write=write, subject=subject, recursive=recursive, deletes=deletes
            )
        if self.after_links and not _harmless(word.value):
            verdicts.append(self.through_new_links(word, write, subject))
        return verdicts

    @staticmethod
    def holds_hidden(resolved: ResolvedPath) -> bool:
        """Whether a tree read reaches hidden answers; a level further down is looked at
        for the worktree itself (`grep -r x .` also reaches `sub/.agents/skills`)."""
        return holds_eval_hidden(resolved.path, deep=resolved.relative == ".")

    def through_new_links(self, word: Word, write: bool, subject: str) -> Verdict:
        """A path used after a command of the same line may have created symlinks: the
        links are not on disk when the gate looks, so where it lands is unknown."""
        what = (
            f"`{short(subject)}` {'writes' if write else 'reads'} {short(word.value, 40)!r} "
            f"after `{short(self.after_links, 40)}` in the same command may have created "
            "symlinks, which the gate cannot see before the command runs"
        )
        risk = "write-outside" if write else "read-outside"
        return self.profile.floor(U, "after-new-links", risk, what, subject)

    def paths_of(self, word: Word) -> list[ResolvedPath | None]:
        """Where a path operand may point, for each possible working directory."""
        value = word.value
        variable = None
        if word.dynamic:
            # "$HOME/x" is as good as ~/x and "$PWD/x" as ./x; anything else is known
            # only at run time.
            variable = _VARIABLE_WORD.fullmatch(value.replace('"', ""))
            name = (variable.group(1) or variable.group(2)) if variable else ""
            if variable is None or (name == "PWD" and not self.pwd_known):
                return [None]
            value = ("~" if name == "HOME" else ".") + (variable.group(3) or "")
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
        for match in globbing.iglob(expand_home(pattern), root_dir=cwd):
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
    ) -> list[Verdict]:
        """The verdicts on one resolved path (None: known only at run time)."""
        if resolved is not None and eval_hidden(resolved.path):
            reason = f"`{short(subject)}` reaches a skill eval case's hidden answers"
            return [Verdict("deny", "builtin.eval-hidden", "eval-hidden", reason)]
        if not write:
            return [self.read(resolved, subject)]
        if resolved is not None and _harmless(resolved.raw):
            return []  # /dev/null, /dev/stdout …: written to, nothing changes
        found = _destruction(resolved, subject, recursive=recursive, deletes=deletes)
        return [*found, self.write(resolved, subject, deletes=deletes)]

    def read(self, resolved: ResolvedPath | None, subject: str) -> Verdict:
        if resolved is None:
            what = f"`{short(subject)}` reads a path known only at run time"
            return self.profile.floor(U, "path-unknown", "read-outside", what, subject)
        if resolved.inside:
            what = f"Reading {resolved.relative} in the worktree"
            return self.profile.floor(R, "read", "read", what, subject)
        what = f"Reading {resolved.path} (outside the worktree)"
        return self.profile.floor(U, "read-outside", "read-outside", what, subject)

    def write(self, resolved: ResolvedPath | None, subject: str, *, deletes: bool) -> Verdict:
        if resolved is None:
            what = f"`{short(subject)}` writes to a path known only at run time"
            return self.profile.floor(U, "path-unknown", "write-outside", what, subject)
        relative = resolved.relative
        # Deleting the worktree itself changes the directory that holds it.
        if relative is None or (deletes and relative == "."):
            return _outside_write(resolved.path, self.profile.name)
        if git_internals(relative):
            what = f"Writing {relative} (git's hooks and configuration)"
            return self.profile.floor(U, "git-internals", "write-worktree", what, subject)
        if any(fnmatchcase(relative, pattern) for pattern in PLANNING_ARTIFACTS):
            what = f"Writing the planning artifact {relative}"
            return self.profile.floor(R, "planning-artifact", "write-worktree", what, subject)
        what = f"Writing {relative} in the worktree"
        return self.profile.floor(N, "write-worktree", "write-worktree", what, subject)


# A skill eval case's reference answers (``<skills>/<name>/evals/<case>/hidden``): the
# agent never sees them, through any tool, under any profile.
_EVAL_HIDDEN = re.compile(r"(^|[/:])skills/[^/]+/evals/[^/]+/hidden(/|$)")


def eval_hidden(path: str) -> bool:
    return _EVAL_HIDDEN.search(path) is not None


# Where hidden answers lie below a directory that is not itself inside a skill: the
# project's `.agents/skills`, a `skills/` directory, or either a level further down.
_SKILLS_BELOW = ("skills", ".agents/skills")


def holds_eval_hidden(path: str, deep: bool = True) -> bool:
    """Whether the directory ``path`` holds a skill eval case's hidden answers (``deep``:
    also in a `skills/` one level further down). Plain directory listings: no glob."""
    parts = path.rstrip("/").split("/")
    if "skills" in parts:
        at = len(parts) - 1 - parts[::-1].index("skills")
        depth = len(parts) - at - 1
        if depth == 0:
            return _skills_hold_hidden(path)
        if depth == 1:
            return _cases_hold_hidden(f"{path}/evals")
        if depth < 4 and parts[at + 2] == "evals":
            return _cases_hold_hidden(path) if depth == 2 else os.path.isdir(f"{path}/hidden")
    places = [f"{path}/{below}" for below in _SKILLS_BELOW]
    if deep:
        try:
            with os.scandir(path) as entries:
                children = [e.path for e in entries if e.is_dir()]
        except OSError:
            children = []
        places += [f"{child}/{below}" for child in children for below in _SKILLS_BELOW]
    return any(_skills_hold_hidden(place) for place in places)


def _skills_hold_hidden(skills: str) -> bool:
    """``skills/<name>/evals/<case>/hidden`` exists under ``skills``."""
    try:
        names = os.listdir(skills)
    except OSError:
        return False
    return any(_cases_hold_hidden(f"{skills}/{name}/evals") for name in names)


def _cases_hold_hidden(evals: str) -> bool:
    try:
        cases = os.listdir(evals)
    except OSError:
        return False
    return any(os.path.isdir(f"{evals}/{case}/hidden") for case in cases)


_GIT_DIR = re.compile(r"(^|/)\.git(/|$)")


def git_internals(relative: str) -> bool:
    """A repository's own files: `.git` anywhere in the path (`plans/r/.git/config`,
    `vendor/x/.git/hooks/pre-commit`), not only the worktree's."""
    return _GIT_DIR.search(relative) is not None


def _harmless(raw: str) -> bool:
    return raw in HARMLESS_TARGETS or raw.startswith("/dev/fd/")


def _destruction(
    resolved: ResolvedPath | None, subject: str, *, recursive: bool, deletes: bool
) -> list[Verdict]:
    """Built-in denies and harness asks: they hold whatever the profile."""
    if resolved is None:
        return [harness("recursive-delete", subject)] if deletes and recursive else []
    found: list[Verdict] = []
    if _BLOCK_DEVICE.match(resolved.path) or _BLOCK_DEVICE.match(resolved.raw):
        found.append(builtin("block-device", subject))
    if recursive and root_like(resolved.path):
        found.append(builtin("recursive-root", subject))
    if deletes and recursive and _a_tree_that_matters(resolved):
        found.append(harness("recursive-delete", subject))
    place = "" if resolved.inside else outside_harness(resolved.path)
    if place:
        found.append(harness(place, subject))
    return found


def _a_tree_that_matters(resolved: ResolvedPath) -> bool:
    """Outside the temp directories; or the worktree itself, all of it, or its .git."""
    relative = resolved.relative
    if relative is None:
        return not temporary(resolved.path)
    return relative == "." or git_internals(relative) or bool(_WHOLE_ROOT.fullmatch(relative))


def _outside_write(path: str, profile: str) -> Verdict:
    """Writes outside the worktree: denied below unrestricted, whatever a rule says."""
    rule = f"profile.{profile}.write-outside"
    if profile == U:
        return Verdict(
            "allow", rule, "write-outside", f"The unrestricted profile may write {path}."
        )
    reason = f"{path} is outside the worktree; the {profile} profile only writes inside it."
    return Verdict("deny", rule, "write-outside", reason)
