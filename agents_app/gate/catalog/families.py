"""Command families: what a shell command does, and the profile that allows it.

A shell command is allowed only when ``classify`` recognises it: whatever is not known
is ``unknown``. ``FAMILIES`` gives each family its risk class and its *floor*: the
lowest profile that allows it without asking. ``Facts`` is what a family handler says
about one command (its family, and the paths it reads and writes).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from agents_app.axes import PROFILE_ORDER, profile_rank
from agents_app.gate.shell.commands import SimpleCommand, Word

R, N, T, U = PROFILE_ORDER  # restricted, normal, trusted, unrestricted


# family: (risk class, floor, what it does — completes "this command …")
FAMILIES: dict[str, tuple[str, str, str]] = {
    "read": ("read", R, "only reads"),
    "cwd": ("read", R, "changes the working directory"),
    "variables": ("read", R, "sets shell variables"),
    "git-read": ("read", R, "reads the repository"),
    "network-read": ("exec-network", R, "reads from the network"),
    "write": ("write-worktree", R, "writes files"),  # its paths decide
    "git-local": ("git-local", N, "changes the local repository"),
    "git-fetch": ("exec-network", N, "fetches from a remote repository"),
    "network-write": ("exec-network", N, "sends data over the network"),
    "build": ("exec-build", T, "builds, tests or checks the project"),
    "install": ("install", T, "installs dependencies"),
    "script": ("exec-code", T, "runs a program"),
    "git-remote": ("git-remote", U, "changes a remote repository"),
    "git-config": ("exec-code", U, "changes git configuration that can run commands"),
    "inline-code": ("exec-code", U, "runs code that cannot be inspected"),
    "rebinding": ("exec-code", U, "changes which program or code later commands run"),
    "host": ("exec-host", U, "changes the host system"),
    "unknown": ("unknown", U, "is not a command the gate knows"),
    "unknown-option": ("unknown", U, "has an option the gate cannot model"),
}


@dataclass(frozen=True, slots=True)
class Facts:
    """What one simple command does, as far as the gate is concerned."""

    family: str
    reads: tuple[Word, ...] = ()  # path operands it reads
    writes: tuple[Word, ...] = ()  # path operands it writes (creates, changes, deletes)
    recursive: bool = False  # the writes reach whole trees (rm -r, chmod -R, find -delete)
    deletes: bool = False  # the writes delete (rm, find -delete, shred)
    harness: str = ""  # id of an irreversible operation: a person confirms it
    path_checked: bool = True  # False: its operands are not known; check the path-like ones
    # It may create symlinks (ln -s, archive extraction, git apply …), which a later
    # command of the same command line could write through unseen. With
    # ``link_sources`` it does only when one of them is not a regular file (mv a b).
    links: bool = False
    link_sources: tuple[Word, ...] = ()
    tree: bool = False  # it reads every file under the directories it reads (grep -r)
    detail: str = ""  # what the reason names (the option the gate cannot model)


# What a family module knows about one command it recognises.
Handler = Callable[[SimpleCommand], Facts]


# Families a reviewer may approve as a whole ("allow `pytest …` in this project"): the
# ones whose commands run the project's own code, so that one approval of the family
# says no more than "this project's tests may run"; never paths, pushes or installs.
APPROVABLE_FAMILIES = frozenset({"build"})
_SUBCOMMAND_TOOLS = frozenset(
    str.split("npm pnpm yarn cargo go uv poetry bundle deno bun pre-commit")
)


def approvable(command: SimpleCommand, facts: Facts) -> str:
    """The declared family of ``command`` a reviewer may approve (`pytest`, `npm test`,
    `python -m pytest`), or "" when it has none."""
    if facts.family not in APPROVABLE_FAMILIES or not command.name:
        return ""
    args = command.args
    if command.name in _SUBCOMMAND_TOOLS:
        sub = next((a for a in args if not a.startswith("-")), "")
        return f"{command.name} {sub}" if sub else ""
    if "-m" in args[:-1] and command.name.startswith(("python", "pypy")):
        return f"{command.name} -m {args[args.index('-m') + 1]}"
    return command.name


def floor(family: str) -> int:
    """Rank of the lowest profile that allows ``family`` without asking."""
    return profile_rank(FAMILIES[family][1])
