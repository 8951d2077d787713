"""git: reading, local changes, fetches and pushes, and the options that run programs.

``git -c`` keys, transport helpers, ``rebase -x`` and aliases can run anything: only
keys and subcommands known to be harmless are matched. The irreversible operations
(force push, ``reset --hard``, ``clean -f`` …) carry a harness id a person confirms.
"""

from __future__ import annotations

import re
from dataclasses import replace

from agents_app.gate.catalog.families import Facts, Handler
from agents_app.gate.catalog.options import names, operands
from agents_app.gate.shell.commands import SimpleCommand, Word

_GIT_VALUES = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env"})
# `git -c` keys that cannot run anything (match allowed, not dangerous, keys).
_GIT_SAFE_CONFIG = re.compile(
    r"(color\..*|core\.quotepath|core\.autocrlf|user\.(name|email)|advice\..*|log\..*"
    r"|init\.defaultbranch|(commit|tag)\.gpgsign|pull\.rebase|merge\.conflictstyle"
    r"|rebase\.autosquash|gc\.auto|maintenance\.auto|fetch\.prune|push\.default|i18n\..*"
    r"|column\.ui|protocol\.version|diff\.renames)=.*",
    re.IGNORECASE,
)
_GIT_READ = names(
    "status log diff show blame annotate shortlog describe rev-parse rev-list ls-files "
    "ls-tree cat-file grep whatchanged name-rev merge-base show-ref for-each-ref "
    "count-objects fsck check-ignore check-attr var version help range-diff cherry "
    "diff-tree diff-index diff-files show-branch verify-commit verify-tag"
)
_GIT_LOCAL = names(
    "add rm mv restore commit switch checkout merge rebase cherry-pick revert reset am apply "
    "clean sparse-checkout bisect gc"
)
_GIT_FETCH = frozenset({"fetch", "pull", "clone", "submodule", "remote-update"})
# Subcommands that run commands given to them (`rebase -x`, `bisect run`, `submodule foreach`).
_GIT_RUNS = {"rebase": ("-x", "--exec"), "bisect": ("run",), "submodule": ("foreach",)}
# Options that name a program git runs: transport helpers and hook templates.
_GIT_PROGRAMS = names("--upload-pack --receive-pack --exec --template --open-files-in-pager")
_GIT_EXTERNAL = frozenset({"difftool", "mergetool", "filter-branch", "filter-repo", "daemon"})


def _git(command: SimpleCommand) -> Facts:
    words = command.words
    index, reads = 1, []
    while index < len(words) and words[index].value.startswith("-"):
        value = words[index].value
        if value in ("-c", "--config-env") or value.startswith(("--exec-path=", "--config-env=")):
            setting = words[index + 1].value if index + 1 < len(words) else ""
            if value != "-c" or not _GIT_SAFE_CONFIG.fullmatch(setting):
                return Facts("git-config")
        elif value in ("-C", "--git-dir", "--work-tree") and index + 1 < len(words):
            reads.append(words[index + 1])
        elif value.startswith(("--git-dir=", "--work-tree=")):
            reads.append(Word(value.split("=", 1)[1], words[index].dynamic))
        index += 2 if value in _GIT_VALUES else 1
    if index >= len(words):
        return Facts("git-read")
    sub, rest = words[index].value, command.argv[index + 1 :]
    facts = _git_subcommand(sub, rest)
    reading = facts.family == "git-read"
    # Operands of read commands may be paths (`git diff --no-index /etc/passwd x`); -C and
    # --work-tree say which repository a changing command changes.
    extra = tuple(operands(words[index + 1 :], "")) if reading and sub != "grep" else ()
    # git grep reads every tracked file (and with --no-index, every file) under `.`.
    extra += (Word("."),) if sub == "grep" else ()
    return Facts(
        facts.family,
        reads=(*reads, *extra, *facts.reads),
        writes=(*(() if reading else reads), *facts.writes),
        harness=facts.harness,
        links=not reading and _git_links(sub, rest),
        tree=sub == "grep",
        link_sources=tuple(Word(a) for a in _positional(rest)[:-1]) if sub == "mv" else (),
    )


def _positional(rest: tuple[str, ...]) -> list[str]:
    return [a for a in rest if not a.startswith("-")]


# Subcommands that write the working tree from commits, patches or the index: any of
# them may create a symlink that a later command of the same line writes through.
_GIT_TREE_WRITERS = names(
    "apply am merge rebase cherry-pick revert pull restore clone submodule bisect "
    "sparse-checkout worktree read-tree checkout-index stash mv reset checkout switch"
)


def _git_links(sub: str, rest: tuple[str, ...]) -> bool:
    flags = {a.split("=", 1)[0] for a in rest if a.startswith("-")}
    if sub not in _GIT_TREE_WRITERS:
        return False
    if sub == "reset":
        return bool(flags & {"--hard", "--merge", "--keep"})
    if sub == "stash":
        return _positional(rest)[:1] not in (["list"], ["show"])
    if sub in ("checkout", "switch") and flags & {"-b", "-B", "-c", "-C", "--orphan"}:
        return len(_positional(rest)) > 1  # a new branch at HEAD leaves the tree as it is
    return True


def _git_patch(rest: tuple[str, ...]) -> Facts:
    """git apply / am: the patch files are read; --directory and --unsafe-paths say
    where the patch writes (with --unsafe-paths, wherever its file names point)."""
    writes: list[Word] = []
    for index, arg in enumerate(rest):
        if arg.startswith("--directory="):
            writes.append(Word(arg.split("=", 1)[1]))
        elif arg == "--directory" and index + 1 < len(rest):
            writes.append(Word(rest[index + 1]))
    if "--unsafe-paths" in rest:
        writes.append(Word("", dynamic=True))
    taken = {i + 1 for i, a in enumerate(rest) if a == "--directory"}
    patches = [Word(a) for i, a in enumerate(rest) if i not in taken and not a.startswith("-")]
    return Facts("git-local", reads=tuple(patches), writes=tuple(writes))


# Long options that run a program, read or write a file, or change configuration. git's
# parse-options takes any unique prefix (`--upload=…` is --upload-pack): an option that
# begins one of these is judged as it, whatever else it might also begin.
_GIT_EFFECTS = {
    **dict.fromkeys(_GIT_PROGRAMS | {"--extcmd", "--tool"}, "exec"),
    **dict.fromkeys(names("--output --output-directory --separate-git-dir --directory"), "write"),
    **dict.fromkeys(
        names(
            "--pathspec-from-file --file --orderfile --reference --reference-if-able "
            "--ignore-revs-file --contents --exclude-from --patterns-from --bundle-uri"
        ),
        "read",
    ),
    "--config": "config",
    "--unsafe-paths": "write",
}
# Short options with a value that is a file (`git grep -f F`, `git commit -F F`).
_GIT_SHORT_READS = {"grep": "f", "commit": "Ft", "tag": "F", "merge": "F", "notes": "F"}
_GIT_SHORT_READS |= {"blame": "S", "ls-files": "X", "diff": "O", "log": "O", "show": "O"}


def git_long(name: str) -> str:
    """The effectful option ``name`` abbreviates (or is), else ``name`` itself."""
    if name in _GIT_EFFECTS or len(name) < 3:
        return name
    return next((option for option in _GIT_EFFECTS if option.startswith(name)), name)


def _spelled_out(rest: tuple[str, ...]) -> tuple[str, ...]:
    """``rest`` with abbreviated effectful long options spelled in full."""
    out: list[str] = []
    for arg in rest:
        if arg == "--":
            return (*out, *rest[len(out) :])
        if arg.startswith("--"):
            name, equals, value = arg.partition("=")
            arg = git_long(name) + equals + value
        out.append(arg)
    return tuple(out)


def _git_files(sub: str, rest: tuple[str, ...]) -> tuple[list[Word], list[Word]]:
    """The files named by the options of ``rest``: (read, written)."""
    reads: list[Word] = []
    writes: list[Word] = []
    letters = _GIT_SHORT_READS.get(sub, "")
    for index, arg in enumerate(rest):
        following = Word(rest[index + 1]) if index + 1 < len(rest) else None
        if arg == "--":
            break
        name, equals, value = arg.partition("=")
        effect = _GIT_EFFECTS.get(name) if arg.startswith("--") else None
        word = Word(value) if equals else following
        if effect in ("read", "write") and word is not None and name != "--directory":
            (reads if effect == "read" else writes).append(word)
        elif letters and len(arg) > 1 and arg[0] == "-" and arg[1] in letters:
            attached = arg[2:]
            found = Word(attached) if attached else following
            reads.extend([found] if found is not None else [])
    return reads, writes


def _git_subcommand(sub: str, given: tuple[str, ...]) -> Facts:
    rest = _spelled_out(given)
    facts = _git_command(sub, rest)
    reads, writes = _git_files(sub, rest)
    if not reads and not writes:
        return facts
    if writes and facts.family == "git-read":
        facts = replace(facts, family="write")
    return replace(facts, reads=(*facts.reads, *reads), writes=(*facts.writes, *writes))


def _git_command(sub: str, rest: tuple[str, ...]) -> Facts:
    flags = {a.split("=", 1)[0] for a in rest if a.startswith("-")}
    if "--config" in flags and sub != "config":
        return Facts("git-config")
    runs = _GIT_RUNS.get(sub, ())
    if sub in _GIT_EXTERNAL or any(r in rest or r in flags for r in runs) or flags & _GIT_PROGRAMS:
        return Facts("inline-code")
    if sub == "grep" and (flags & {"-O"} or any(a.startswith("-O") for a in rest)):
        return Facts("inline-code")  # git grep -O CMD opens matches with a program
    if sub == "clone" and flags & {"-c", "--config", "-u"}:
        return Facts("git-config")
    harness = _git_harness(sub, rest, flags)
    if sub in ("branch", "tag", "stash", "remote", "config", "reflog", "worktree", "notes"):
        return _git_listing(sub, rest, flags, harness)
    if sub in _GIT_READ:
        return Facts("git-read")
    if sub == "clean" and flags & {"-n", "--dry-run"}:
        return Facts("git-read")
    if sub in ("apply", "am"):
        return _git_patch(rest)
    if sub in _GIT_LOCAL:
        return Facts("git-local", harness=harness)
    if sub == "clone":
        found = [a for a in rest if not a.startswith("-")]
        return Facts("git-fetch", writes=(Word(found[1] if len(found) > 1 else "."),))
    if sub in ("init", "format-patch"):
        where: list[str] = [a for a in rest if not a.startswith("-")][:1] if sub == "init" else []
        out = [rest[i + 1] for i, a in enumerate(rest[:-1]) if a == "-o"]
        return Facts("git-local", writes=tuple(Word(w) for w in (*where, *out)))
    if sub in _GIT_FETCH:
        return Facts("git-fetch")
    if sub == "ls-remote":
        return Facts("network-read")
    if sub == "push":
        return Facts("git-remote", harness=harness)
    return Facts("unknown")  # includes aliases, which may run anything


def _git_listing(sub: str, rest: tuple[str, ...], flags: set[str], harness: str) -> Facts:
    """branch/tag/stash/remote/config/…: read-only forms, otherwise changes."""
    positional = [a for a in rest if not a.startswith("-")]
    listing = {
        "branch": not positional or bool(flags & {"--list", "-l"}),
        "tag": not positional or bool(flags & {"--list", "-l"}),
        "stash": bool(positional) and positional[0] in ("list", "show"),
        "remote": not positional or positional[0] in ("show", "get-url", "-v"),
        "config": bool(flags & {"--get", "--get-all", "--get-regexp", "--list", "-l"})
        or (len(positional) == 1 and not flags - {"--global", "--local", "--show-origin"}),
        "reflog": not positional or positional[0] in ("show", "exists"),
        "worktree": bool(positional) and positional[0] == "list",
        "notes": not positional or positional[0] in ("list", "show"),
    }[sub]
    if listing and not harness:
        return Facts("git-read")
    if sub in ("remote", "config"):
        return Facts("git-config")
    if sub == "worktree" and positional[:1] == ["add"]:
        return Facts("git-local", writes=tuple(Word(p) for p in positional[1:2]))
    return Facts("git-local", harness=harness)


def _git_harness(sub: str, rest: tuple[str, ...], flags: set[str]) -> str:
    """The irreversible git operations a person confirms under every profile."""
    short = "".join(a[1:] for a in rest if a.startswith("-") and not a.startswith("--"))
    if sub == "push":
        forced = flags & {"--force", "--force-with-lease", "--force-if-includes", "--mirror"}
        if forced or "f" in short or any(a.startswith("+") for a in rest):
            return "git-push-force"
        if "--delete" in flags or "d" in short or any(a.startswith(":") for a in rest):
            return "git-push-delete"
    if sub == "reset" and "--hard" in flags:
        return "git-reset-hard"
    if sub == "clean" and ("f" in short or "--force" in flags):
        return "git-clean"
    if sub == "branch" and ({"--delete", "--force"} & flags or set(short) & set("dDf")):
        return "git-branch-delete"
    if sub in ("checkout", "switch") and ({"--force", "--discard-changes"} & flags or "f" in short):
        return "git-checkout-force"
    if sub in ("checkout", "restore") and set(rest) & {".", ":/", "*", ":/*"}:
        return "git-discard-changes"
    if sub == "stash" and rest[:1] and rest[0] in ("drop", "clear"):
        return "git-stash-drop"
    if sub == "reflog" and rest[:1] and rest[0] in ("expire", "delete"):
        return "git-reflog-expire"
    if sub == "tag" and ("d" in short or "--delete" in flags):
        return "git-tag-delete"
    return ""


HANDLERS: dict[str, Handler] = {
    "git": _git,
}
