"""What the agent's tools and the shell commands it may run are (DESIGN §5, layer 1).

Two static tables that the pure gate (``policies.py``) reads:

* ``TOOLS``: each tool with its side effect and the lowest profile that is offered it.
  Every built-in tool has a use allowed under ``restricted`` (``write_file``/``edit_file``
  for planning artifacts, ``run_command`` for ``git log`` or ``curl``), so none is hidden
  and each call is decided on its own. A tool added later (deploy, MCP) sets a higher
  ``min_profile`` and ``tools_for_profile`` hides it from the model.
* Command families. A shell command is allowed only when ``classify`` recognises it
  (``ls``, ``git status``, ``pytest`` …): we match allowed commands rather than list
  dangerous ones, so whatever is not known here is ``unknown``. Within a known command,
  the options that write or execute (``sort -o``, ``rg --pre``, sed's ``e`` and ``w``)
  move it to a riskier family. ``FAMILIES`` gives each family its risk class and its
  *floor*: the lowest profile that allows it without asking.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from agents_app.axes import PROFILE_ORDER, profile_rank
from agents_app.gate.shell.commands import SimpleCommand, Word
from agents_app.gate.shell.wrappers import find_roots

R, N, T, U = PROFILE_ORDER  # restricted, normal, trusted, unrestricted


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


@dataclass(frozen=True, slots=True)
class ToolSpec:
    name: str
    side_effect: str  # none | read | write | exec
    min_profile: str
    path_keys: tuple[str, ...] = ()  # input keys that hold paths


TOOLS: dict[str, ToolSpec] = {
    spec.name: spec
    for spec in (
        ToolSpec("read_file", "read", R, ("path",)),
        ToolSpec("list_dir", "read", R, ("path",)),
        ToolSpec("glob", "read", R, ("path",)),
        ToolSpec("grep", "read", R, ("path",)),
        ToolSpec("write_file", "write", R, ("path",)),
        ToolSpec("edit_file", "write", R, ("path",)),
        ToolSpec("run_command", "exec", R, ("cwd",)),
        ToolSpec("load_skill", "none", R),
        ToolSpec("ask_user", "none", R),
        ToolSpec("finish", "none", R),
    )
}


def tools_for_profile(profile: str, catalog: dict[str, ToolSpec] | None = None) -> list[str]:
    """Names of the tools offered to the model under ``profile`` (layer 1)."""
    rank = profile_rank(profile)
    specs = (catalog or TOOLS).values()
    return [spec.name for spec in specs if profile_rank(spec.min_profile) <= rank]


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
    "host": ("exec-host", U, "changes the host system"),
    "unknown": ("unknown", U, "is not a command the gate knows"),
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


def classify(command: SimpleCommand) -> Facts:
    """The family and path operands of ``command`` (wrappers already peeled off)."""
    if not command.argv:
        return Facts("variables")
    handler = _HANDLERS.get(command.name)
    if handler is None and _PYTHON.fullmatch(command.name):
        handler = _python
    elif handler is None and command.name.startswith(("mkfs.", "mke2fs.", "fsck.")):
        handler = _disk
    facts = handler(command) if handler else Facts("unknown", path_checked=False)
    program = command.program
    if "/" in program and program.rsplit("/", 1)[0] not in SYSTEM_BIN_DIRS:
        # `./ls` is the project's program called ls, not /bin/ls: judge it as a program
        # file, and keep what its name implies (paths, harness) when that is worse.
        riskier = facts.family != "unknown" and floor(facts.family) > floor("script")
        family = facts.family if riskier else "script"
        reads = (command.words[0], *facts.reads)
        return replace(facts, family=family, reads=reads, path_checked=True)
    return facts


def floor(family: str) -> int:
    """Rank of the lowest profile that allows ``family`` without asking."""
    return profile_rank(FAMILIES[family][1])


SYSTEM_BIN_DIRS = frozenset(
    {"/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin", "/usr/local/sbin"}
)


# -- operands -------------------------------------------------------------------------


def operands(
    words: Iterable[Word], values: str = "", long: frozenset[str] = frozenset()
) -> list[Word]:
    """Non-option words; ``values``/``long`` name the options that take a value."""
    out: list[Word] = []
    rest = iter(words)
    for word in rest:
        value = word.value
        if value == "--":
            out.extend(rest)
            break
        if not value.startswith("-") or value == "-" or word.dynamic:
            out.append(word)
        elif value.startswith("--"):
            if value in long:
                next(rest, None)
        else:
            for position, letter in enumerate(value[1:], start=1):
                if letter in values:
                    if position == len(value) - 1:
                        next(rest, None)
                    break
    return out


def option_value(command: SimpleCommand, short: str, long: str = "") -> Word | None:
    """The value of ``-x VALUE``, ``-xVALUE``, ``-abx VALUE``, ``--long VALUE``, ``--long=V``."""
    words = command.words
    for index, word in enumerate(words[1:], start=1):
        value = word.value
        if value == "--":
            return None
        following = words[index + 1] if index + 1 < len(words) else Word("")
        if long and value == long:
            return following
        if long and value.startswith(long + "="):
            return Word(value[len(long) + 1 :], word.dynamic)
        if short and value.startswith("-") and not value.startswith("--"):
            position = value.find(short[1], 1)
            if position > 0:
                rest = value[position + 1 :]
                return Word(rest, word.dynamic) if rest else following
    return None


def has_short(command: SimpleCommand, letters: str, *long: str) -> bool:
    """Whether an option cluster holds one of ``letters`` or a long option is given."""
    for flag in command.flags:
        if flag.startswith("--"):
            if flag.split("=", 1)[0] in long:
                return True
        elif any(letter in flag[1:] for letter in letters):
            return True
    return False


def _simple(family: str, values: str = "", paths: bool = True) -> Callable[[SimpleCommand], Facts]:
    def handler(command: SimpleCommand) -> Facts:
        reads = tuple(operands(command.words[1:], values)) if paths else ()
        return Facts(family, reads=reads)

    return handler


def _unchecked(family: str) -> Callable[[SimpleCommand], Facts]:
    return lambda command: Facts(family, path_checked=False)


# -- reading commands --------------------------------------------------------------------


def _pattern_first(values: str, long: frozenset[str]) -> Callable[[SimpleCommand], Facts]:
    """grep-like: the first operand is a pattern unless -e/-f gave one."""

    def handler(command: SimpleCommand) -> Facts:
        if command.name == "rg" and has_short(command, "", "--pre"):
            return Facts("inline-code")
        found = operands(command.words[1:], values, long)
        given = option_value(command, "-e", "--regexp") or option_value(command, "-f", "--file")
        pattern_file = option_value(command, "-f", "--file")
        reads = found if given else found[1:]
        return Facts("read", reads=(*reads, *([pattern_file] if pattern_file else [])))

    return handler


def _sort(command: SimpleCommand) -> Facts:
    if has_short(command, "", "--compress-program"):
        return Facts("inline-code")
    long = frozenset({"--key", "--field-separator", "--output", "--buffer-size"})
    reads = operands(command.words[1:], "ktoST", long | {"--temporary-directory"})
    writes = [w for w in (option_value(command, "-o", "--output"),) if w]
    writes += [w for w in (option_value(command, "-T", "--temporary-directory"),) if w]
    return Facts("write" if writes else "read", reads=tuple(reads), writes=tuple(writes))


def _in_out(values: str) -> Callable[[SimpleCommand], Facts]:
    """uniq/xxd: ``cmd [INPUT [OUTPUT]]`` — a second operand is written."""

    def handler(command: SimpleCommand) -> Facts:
        found = operands(command.words[1:], values)
        if len(found) > 1:
            return Facts("write", reads=tuple(found[:1]), writes=tuple(found[1:]))
        return Facts("read", reads=tuple(found))

    return handler


def _tree(command: SimpleCommand) -> Facts:
    out = option_value(command, "-o")
    reads = tuple(operands(command.words[1:], "LIPoHT"))
    return Facts("write" if out else "read", reads=reads, writes=(out,) if out else ())


_FIND_NOT_TESTS = _names("-delete -depth -mindepth -maxdepth -xdev -mount -L -H -P -print")


def _find(command: SimpleCommand) -> Facts:
    roots = find_roots(command.words)
    writes: list[Word] = []
    words = command.words
    for index, word in enumerate(words):
        if word.value in ("-fprint", "-fprint0", "-fprintf", "-fls") and index + 1 < len(words):
            writes.append(words[index + 1])
    if any(w.value == "-delete" for w in words):
        # Without a test (-name, -type …) find -delete removes everything under the roots.
        tests = [w for w in words[len(roots) + 1 :] if w.value not in _FIND_NOT_TESTS]
        everything = not any(w.value.startswith("-") for w in tests)
        return Facts(
            "write", reads=roots, writes=(*roots, *writes), recursive=everything, deletes=True
        )
    return Facts("write" if writes else "read", reads=roots, writes=tuple(writes))


def _sed(command: SimpleCommand) -> Facts:
    parsed = _sed_options(command.words[1:])
    if parsed is None:
        return Facts("inline-code")  # an option the gate does not know, or a script file
    scripts, files, in_place = parsed
    if not scripts:
        scripts, files = files[:1] or [Word("")], files[1:]
    if any(s.dynamic or not sed_script_is_safe(s.value) for s in scripts):
        return Facts("inline-code")
    if in_place:
        return Facts("write", reads=tuple(files), writes=tuple(files))
    return Facts("read", reads=tuple(files))


_SED_FLAGS = frozenset("nErszu")
_SED_LONG = _names("--quiet --silent --regexp-extended --separate --null-data --unbuffered")
_SED_LONG |= _names("--posix --debug --sandbox --follow-symlinks")


def _sed_options(words: tuple[Word, ...]) -> tuple[list[Word], list[Word], bool] | None:
    """sed's scripts, files and -i, or None for an option outside the allowed set.

    Parsed exactly: -i takes an *attached* optional suffix, so `sed -ie SCRIPT` is
    -i with suffix "e", and SCRIPT is the script, not a value of -e.
    """
    scripts: list[Word] = []
    files: list[Word] = []
    in_place = False
    rest = iter(words)
    for word in rest:
        value = word.value
        if value == "--":
            files.extend(rest)
        elif word.dynamic or not value.startswith("-") or value == "-":
            files.append(word)
        elif value.startswith("--"):
            name, has_value, attached = value.partition("=")
            if name in ("--expression", "--line-length") and not has_value:
                attached = next(rest, Word("")).value
            if name == "--expression":
                scripts.append(Word(attached))
            elif name == "--in-place":
                in_place = True
            elif name not in _SED_LONG and name != "--line-length":
                return None
        else:
            for position, letter in enumerate(value[1:], start=1):
                if letter in "el":
                    tail = value[position + 1 :]
                    taken = Word(tail, word.dynamic) if tail else next(rest, Word(""))
                    scripts.extend([taken] if letter == "e" else [])
                    break
                if letter == "i":
                    in_place = True
                    break  # the rest of the cluster is the backup suffix
                if letter not in _SED_FLAGS:
                    return None
    return scripts, files, in_place


_AWK_DANGER = re.compile(r"system|getline|[|>]|\bclose\b")


def _awk(command: SimpleCommand) -> Facts:
    # Only -F and -v are allowed: gawk's -e, -f, -i and -l add code or extensions.
    found: list[Word] = []
    rest = iter(command.words[1:])
    for word in rest:
        value = word.value
        if value in ("-F", "-v", "--field-separator", "--assign"):
            next(rest, None)
        elif value.startswith(("-F", "-v", "--field-separator=", "--assign=")):
            continue
        elif value.startswith("-") and value != "-" and not word.dynamic:
            if value == "--":
                found.extend(rest)
                break
            return Facts("inline-code")
        else:
            found.append(word)
    if not found or found[0].dynamic or _AWK_DANGER.search(found[0].value):
        return Facts("inline-code")  # awk can run commands and write files
    return Facts("read", reads=tuple(w for w in found[1:] if "=" not in w.value))


def _jq(command: SimpleCommand) -> Facts:
    words = command.words
    reads: list[Word] = []
    found: list[Word] = []
    index = 1
    while index < len(words):
        value = words[index].value
        if value in ("--args", "--jsonargs"):
            break
        if value in ("--arg", "--argjson", "--slurpfile", "--rawfile"):
            if value in ("--slurpfile", "--rawfile") and index + 2 < len(words):
                reads.append(words[index + 2])
            index += 3
            continue
        if value in ("-f", "--from-file", "--indent") and index + 1 < len(words):
            reads.extend(words[index + 1 : index + 2] if value != "--indent" else ())
            index += 2
            continue
        if not value.startswith("-") or value == "-":
            found.append(words[index])
        index += 1
    given = any(w.value in ("-f", "--from-file") for w in words)
    return Facts("read", reads=(*reads, *(found if given else found[1:])))


def _date(command: SimpleCommand) -> Facts:
    return Facts("host" if has_short(command, "s", "--set") else "read")


def _hostname(command: SimpleCommand) -> Facts:
    return Facts("host" if operands(command.words[1:]) else "read")


# -- writing commands --------------------------------------------------------------------


def _recursive(command: SimpleCommand) -> bool:
    return has_short(command, "rR", "--recursive")


def _all_written(values: str = "", deletes: bool = False) -> Callable[[SimpleCommand], Facts]:
    def handler(command: SimpleCommand) -> Facts:
        found = tuple(operands(command.words[1:], values))
        target = option_value(command, "-t", "--target-directory") if "t" in values else None
        writes = (*found, *((target,) if target and command.name == "mv" else ()))
        recursive = deletes and _recursive(command)
        return Facts("write", writes=writes, recursive=recursive, deletes=deletes)

    return handler


def _copy(command: SimpleCommand) -> Facts:
    found = operands(command.words[1:], "tSmog", frozenset({"--target-directory", "--suffix"}))
    target = option_value(command, "-t", "--target-directory")
    if command.name == "ln":
        # A link is written through later: its target counts as written now, so that
        # `ln -s /etc/hosts h && echo x > h` cannot reach /etc.
        return Facts("write", writes=(*found, *((target,) if target else ())))
    if target is not None:
        return Facts("write", reads=tuple(found), writes=(target,))
    if command.name == "install" and has_short(command, "d", "--directory"):
        return Facts("write", writes=tuple(found))
    return Facts("write", reads=tuple(found[:-1]), writes=tuple(found[-1:]))


def _mode_first(command: SimpleCommand) -> Facts:
    """chmod/chown/chgrp: the first operand is a mode or owner unless --reference."""
    found = operands(command.words[1:])
    targets = found if has_short(command, "", "--reference") else found[1:]
    facts = Facts("write", writes=tuple(targets), recursive=_recursive(command))
    mode = found[0].value if found else ""
    if command.name == "chmod" and facts.recursive and _world_writable(mode):
        return Facts("write", writes=facts.writes, recursive=True, harness="chmod-world-writable")
    return facts


def _world_writable(mode: str) -> bool:
    if re.fullmatch(r"[0-7]{3,4}", mode):
        return int(mode[-1]) & 2 == 2
    return bool(re.search(r"(^|[,ao])[+=][rwxXst]*w", mode))


def _dd(command: SimpleCommand) -> Facts:
    reads = tuple(Word(w.value[3:], w.dynamic) for w in command.words if w.value.startswith("if="))
    writes = tuple(Word(w.value[3:], w.dynamic) for w in command.words if w.value.startswith("of="))
    return Facts("write", reads=reads, writes=writes)


def _tar(command: SimpleCommand) -> Facts:
    runs: tuple[str, ...] = (
        "--to-command",
        "--use-compress-program",
        "--checkpoint-action",
        "--info-script",
    )
    runs += ("--new-volume-script", "--rsh-command", "--rmt-command")
    if has_short(command, "IF", *runs):
        return Facts("inline-code")  # options that run a program
    first = command.args[0] if command.args else ""
    mode = first if not first.startswith("-") else "".join(f[1:] for f in command.flags)
    archive = option_value(command, "-f", "--file")
    into = option_value(command, "-C", "--directory") or Word(".")
    found = tuple(operands(command.words[2:] if mode is first else command.words[1:], "fCbHKNT"))
    if "x" in mode or "--extract" in command.argv:
        return Facts("write", reads=(archive,) if archive else (), writes=(into,))
    if "c" in mode or "r" in mode or "u" in mode:
        base = option_value(command, "-C", "--directory")  # operands are read from there
        reads = (*found, *((base,) if base else ()))
        return Facts("write", reads=reads, writes=(archive,) if archive else ())
    return Facts("read", reads=(archive,) if archive else ())


def _unzip(command: SimpleCommand) -> Facts:
    found = tuple(operands(command.words[1:], "dx"))
    if has_short(command, "pl"):
        return Facts("read", reads=found[:1])
    into = option_value(command, "-d") or Word(".")
    return Facts("write", reads=found[:1], writes=(into,))


def _zip(command: SimpleCommand) -> Facts:
    if has_short(command, "T", "--unzip-command"):
        return Facts("inline-code")
    found = tuple(operands(command.words[1:], "bnt"))
    temp = option_value(command, "-b", "--temp-path")
    return Facts("write", reads=found[1:], writes=(*found[:1], *((temp,) if temp else ())))


def _compress(command: SimpleCommand) -> Facts:
    found = tuple(operands(command.words[1:], "S"))
    if has_short(command, "cltd", "--stdout", "--list", "--test") and not has_short(command, "k"):
        return Facts("read", reads=found)
    return Facts("write", reads=found, writes=found)


def _patch(command: SimpleCommand) -> Facts:
    into = option_value(command, "-d", "--directory") or Word(".")
    out = option_value(command, "-o", "--output")
    given = option_value(command, "-i", "--input")
    found = operands(command.words[1:], "dopiBrFDVYz")
    side = [option_value(command, "-r", "--reject-file"), option_value(command, "-B", "--prefix")]
    writes = (out or into, *(w for w in side if w))
    return Facts("write", reads=tuple(found) + ((given,) if given else ()), writes=writes)


def _tee(command: SimpleCommand) -> Facts:
    return Facts("write", writes=tuple(operands(command.words[1:])))


def _mktemp(command: SimpleCommand) -> Facts:
    where = option_value(command, "-p", "--tmpdir")
    found = operands(command.words[1:], "p")
    if where is None and found and "/" in found[0].value:
        return Facts("write", writes=(found[0],))
    return Facts("write", writes=(where or Word("/tmp"),))


# -- sed scripts --------------------------------------------------------------------------

_SED_ADDRESS = re.compile(r"\s*(?:\d+|\$|/(?:\\.|[^/\\])*/[IM]*)(?:~\d+)?")
_SED_SIMPLE = frozenset("pdDnNgGhHxlqQz=F{}")


def sed_script_is_safe(script: str) -> bool:
    """True when a sed script only edits text: no ``e`` (run a command), ``w``/``W``
    (write a file), ``r``/``R`` (read another file) and no ``s///e`` or ``s///w``."""
    index = 0
    while index < len(script):
        index = _skip(script, index, " \t\n;")
        if index >= len(script):
            return True
        for _ in range(2):  # address, then `,address`
            match = _SED_ADDRESS.match(script, index)
            if match:
                index = match.end()
            if index < len(script) and script[index] == ",":
                index += 1
        index = _skip(script, index, " \t!")
        if index >= len(script):
            return True
        command = script[index]
        if command in _SED_SIMPLE:
            index = _skip(script, index + 1, "0123456789")
        elif command in "sy":
            end = _after_delimited(script, index + 1, 2)
            if end < 0:
                return False
            flags = re.match(r"[0-9gpiImM]*", script[end:])
            index = end + (flags.end() if flags else 0)
            if index < len(script) and script[index] not in " \t\n;}":
                return False  # e, w or an unknown flag
        elif command in "aicbtT:#":
            index = script.find("\n", index)
            if index < 0:
                return True
        else:
            return False
    return True


def _skip(text: str, index: int, chars: str) -> int:
    while index < len(text) and text[index] in chars:
        index += 1
    return index


def _after_delimited(text: str, index: int, parts: int) -> int:
    """Index after ``parts`` delimited sections starting at the delimiter (s/a/b/)."""
    if index >= len(text) or text[index] in "\n\\":
        return -1
    delimiter = text[index]
    index += 1
    for _ in range(parts):
        while index < len(text) and text[index] != delimiter:
            index += 2 if text[index] == "\\" else 1
        if index >= len(text):
            return -1
        index += 1
    return index


# -- git ---------------------------------------------------------------------------------

_GIT_VALUES = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env"})
# `git -c` keys that cannot run anything (match allowed, not dangerous, keys).
_GIT_SAFE_CONFIG = re.compile(
    r"(color\..*|core\.quotepath|core\.autocrlf|user\.(name|email)|advice\..*|log\..*"
    r"|init\.defaultbranch|(commit|tag)\.gpgsign|pull\.rebase|merge\.conflictstyle"
    r"|rebase\.autosquash|gc\.auto|maintenance\.auto|fetch\.prune|push\.default|i18n\..*"
    r"|column\.ui|protocol\.version|diff\.renames)=.*",
    re.IGNORECASE,
)
_GIT_READ = _names(
    "status log diff show blame annotate shortlog describe rev-parse rev-list ls-files "
    "ls-tree cat-file grep whatchanged name-rev merge-base show-ref for-each-ref "
    "count-objects fsck check-ignore check-attr var version help range-diff cherry "
    "diff-tree diff-index diff-files show-branch verify-commit verify-tag"
)
_GIT_LOCAL = _names(
    "add rm mv restore commit switch checkout merge rebase cherry-pick revert reset am apply "
    "clean sparse-checkout bisect gc"
)
_GIT_FETCH = frozenset({"fetch", "pull", "clone", "submodule", "remote-update"})
# Subcommands that run commands given to them (`rebase -x`, `bisect run`, `submodule foreach`).
_GIT_RUNS = {"rebase": ("-x", "--exec"), "bisect": ("run",), "submodule": ("foreach",)}
# Options that name a program git runs: transport helpers and hook templates.
_GIT_PROGRAMS = _names("--upload-pack --receive-pack --exec --template --open-files-in-pager")
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
    return Facts(
        facts.family,
        reads=(*reads, *extra),
        writes=(*(() if reading else reads), *facts.writes),
        harness=facts.harness,
    )


def _git_subcommand(sub: str, rest: tuple[str, ...]) -> Facts:
    flags = {a.split("=", 1)[0] for a in rest if a.startswith("-")}
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
        output = [Word(a.split("=", 1)[1]) for a in rest if a.startswith("--output=")]
        return Facts("write" if output else "git-read", writes=tuple(output))
    if sub == "clean" and flags & {"-n", "--dry-run"}:
        return Facts("git-read")
    if sub in _GIT_LOCAL:
        return Facts("git-local", harness=harness)
    if sub == "clone":
        found = [a for a in rest if not a.startswith("-")]
        return Facts("git-fetch", writes=(Word(found[1] if len(found) > 1 else "."),))
    if sub in ("init", "format-patch"):
        where: list[str] = [a for a in rest if not a.startswith("-")][:1] if sub == "init" else []
        out = [rest[i + 1] for i, a in enumerate(rest[:-1]) if a in ("-o", "--output-directory")]
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


# -- network -----------------------------------------------------------------------------

_CURL_FLAGS = _names(
    "--silent --show-error --fail --fail-with-body --location --head --include --insecure "
    "--compressed --verbose --remote-name --remote-name-all --globoff --http1.1 --http2 "
    "--http3 --get --no-buffer --progress-bar --create-dirs --ipv4 --ipv6 --raw --fail-early "
    "--no-progress-meter --location-trusted --retry-all-errors --path-as-is --digest --basic "
    "--list-only --remote-time --remote-header-name --no-keepalive --tcp-nodelay"
)
_CURL_WRITES = frozenset(
    {"-o", "--output", "--output-dir", "-D", "--dump-header", "-c", "--cookie-jar", "--trace"}
) | {"--trace-ascii", "--stderr", "--libcurl", "--etag-save"}
_CURL_SENDS = frozenset({"-d", "-F", "-T", "--json", "--upload-file", "--form", "--form-string"})


def _curl(command: SimpleCommand) -> Facts:
    words = command.words
    reads: list[Word] = []
    writes: list[Word] = []
    sends = False
    index = 1
    while index < len(words):
        word = words[index]
        name, _, attached = word.value.partition("=")
        if not word.value.startswith("-") or word.value == "-" or word.dynamic:
            index += 1
            continue
        if word.value.startswith("--") and (name in _CURL_FLAGS or attached):
            value = Word(attached) if attached else None
            index += 1
        elif word.value.startswith("--"):
            value = words[index + 1] if index + 1 < len(words) else Word("")
            index += 2
        else:
            name, value, index = _curl_short(words, index)
        if name in ("-K", "--config"):
            return Facts("unknown")  # a config file can hold any option
        sends = sends or name in _CURL_SENDS or name.startswith("--data")
        sends = sends or (name in ("-X", "--request") and _unsafe_method(value))
        _curl_paths(name, value, reads, writes)
    family = "network-write" if sends else "network-read"
    return Facts(family, reads=(*reads, *_local_urls(command)), writes=tuple(writes))


def _local_urls(command: SimpleCommand) -> tuple[Word, ...]:
    """file:// URLs read local files, like cat."""
    found = (w for w in command.words[1:] if w.value.lower().startswith("file:"))
    return tuple(Word(re.sub(r"(?i)^file:(//[^/]*)?", "", w.value), w.dynamic) for w in found)


def _curl_short(words: tuple[Word, ...], index: int) -> tuple[str, Word | None, int]:
    """One short option cluster: curl's value letters take the rest or the next word."""
    cluster = words[index].value[1:]
    for position, letter in enumerate(cluster):
        if letter in "AbcCdDeEFHKmoPQrtTuUwxXyYz":
            if position + 1 < len(cluster):
                return "-" + letter, Word(cluster[position + 1 :]), index + 1
            following = words[index + 1] if index + 1 < len(words) else Word("")
            return "-" + letter, following, index + 2
        if letter == "O":
            return "-O", None, index + 1
    return "-" + cluster[-1:], None, index + 1


def _unsafe_method(value: Word | None) -> bool:
    if value is None:
        return False
    return value.dynamic or value.value.upper() not in ("GET", "HEAD", "OPTIONS")


def _curl_paths(name: str, value: Word | None, reads: list[Word], writes: list[Word]) -> None:
    if name in ("-O", "--remote-name", "--remote-name-all"):
        writes.append(Word("."))
    elif value is None or value.value == "-":
        return
    elif name in _CURL_WRITES:
        writes.append(value)
    elif name in ("-T", "--upload-file"):
        reads.append(value)
    elif value.value.startswith("@") or "=@" in value.value or "=<" in value.value:
        reads.append(Word(re.split(r"@|<", value.value, maxsplit=1)[1], value.dynamic))
    elif name in ("-b", "--cookie") and "=" not in value.value:
        reads.append(value)


def _wget(command: SimpleCommand) -> Facts:
    if has_short(command, "e", "--execute", "--config"):
        return Facts("unknown")
    sends = has_short(command, "", "--post-data", "--post-file", "--method", "--body-data")
    reads = [w for w in (option_value(command, "-i", "--input-file"),) if w]
    writes = [w for w in (option_value(command, "-o", "--output-file"),) if w]
    writes += [w for w in (option_value(command, "-a", "--append-output"),) if w]
    document = option_value(command, "-O", "--output-document")
    if document is not None and document.value != "-":
        writes.append(document)
    elif document is None and not has_short(command, "", "--spider"):
        writes.append(option_value(command, "-P", "--directory-prefix") or Word("."))
    family = "network-write" if sends else "network-read"
    return Facts(family, reads=(*reads, *_local_urls(command)), writes=tuple(writes))


# -- build, install, interpreters -----------------------------------------------------------

_VERSION = frozenset({"--version", "-V", "--help", "-h", "version", "help"})


def _subcommands(
    table: dict[str, str], default: str = "unknown"
) -> Callable[[SimpleCommand], Facts]:
    """Tools whose first operand picks what they do (cargo build, npm install …)."""

    def handler(command: SimpleCommand) -> Facts:
        if command.args[:1] and command.args[0] in _VERSION:
            return Facts("read")
        found = operands(command.words[1:], "C")
        sub = found[0].value if found else ""
        family = table.get(sub, table.get("", default) if not sub else default)
        if family == "install" and has_short(
            command, "g", "--global", "--user", "--target", "--root"
        ):
            family = "host"  # outside the project: global or per-user installs
        return Facts(family, path_checked=False)

    return handler


_NPM = dict.fromkeys(
    _names("test t tst run run-script start stop restart build lint rebuild pack"), "build"
)
_NPM |= dict.fromkeys(
    _names("install i ci add remove rm uninstall un update up upgrade prune dedupe"), "install"
)
_NPM |= dict.fromkeys(_names("ls list view info outdated why explain audit"), "read")
_NPM |= dict.fromkeys(_names("exec x dlx create init"), "inline-code")  # fetch and run a package
_YARN = {**_NPM, "": "install"}  # bare `yarn` installs; `yarn NAME` runs a package script
_CARGO = dict.fromkeys(
    _names("build b test t check c clippy fmt run r doc bench fix clean nextest"), "build"
)
_CARGO |= dict.fromkeys(
    _names("fetch update add remove generate-lockfile vendor install"), "install"
)
_CARGO |= dict.fromkeys(_names("tree metadata search locate-project"), "read")
_GO = dict.fromkeys(_names("build test vet fmt run generate tool clean"), "build")
_GO |= dict.fromkeys(_names("mod get install work"), "install")
_GO |= {"list": "read", "version": "read", "doc": "read"}
_PIP = dict.fromkeys(_names("install uninstall download wheel"), "install")
_PIP |= dict.fromkeys(_names("list show freeze check debug index inspect"), "read")
_UV = {"pip": "install", "sync": "install", "lock": "install", "add": "install"}
_UV |= {"remove": "install", "venv": "install", "build": "build", "tree": "read"}
_POETRY = dict.fromkeys(_names("install add remove update lock sync"), "install")
_POETRY |= {"build": "build", "check": "build", "show": "read"}
_PRE_COMMIT = {"run": "build", "autoupdate": "install", "install": "git-config"}
_BUNDLE = {"install": "install", "update": "install", "exec": "build", "": "install"}
_DENO = dict.fromkeys(_names("test check lint fmt bench doc"), "build")
_DENO |= {"install": "install", "add": "install", "run": "script", "eval": "inline-code"}
_BUN = {**_DENO, "x": "inline-code", "i": "install", "remove": "install", "build": "build"}
_PYTHON_BUILD_MODULES = _names(
    "pytest unittest doctest coverage mypy ruff black isort flake8 pylint pyflakes "
    "pycodestyle pydocstyle bandit tox nox build compileall py_compile pyright"
)
_PYTHON = re.compile(r"(python|pypy)[0-9.]*")


def _python(command: SimpleCommand) -> Facts:
    words = command.words
    index = 1
    while index < len(words):
        value = words[index].value
        cluster = value[1:] if value.startswith("-") and not value.startswith("--") else ""
        if "c" in cluster or "i" in cluster:
            return Facts("inline-code")  # -c CODE, also inside a cluster (-Ic); -i: a REPL
        if "m" in cluster:
            attached = cluster.split("m", 1)[1]
            module = attached or (words[index + 1].value if index + 1 < len(words) else "")
            rest = command.words[index + (1 if attached else 2) :]
            return _python_module(module.split(".")[0], rest)
        if value in _VERSION:
            return Facts("read")
        if not value.startswith("-") or value == "-":
            break
        index += 2 if value in ("-W", "-X", "-Q") else 1
    if index >= len(words) or words[index].value == "-" or words[index].dynamic:
        return Facts("inline-code")  # a program from standard input, or from <(…)
    return Facts("script", reads=(words[index],))


def _python_module(module: str, rest: tuple[Word, ...]) -> Facts:
    if module in _PYTHON_BUILD_MODULES:
        return Facts("build", path_checked=False)
    if module == "pip":
        sub = next((w.value for w in rest if not w.value.startswith("-")), "")
        return Facts(_PIP.get(sub, "unknown"), path_checked=False)
    if module in ("venv", "virtualenv"):
        return Facts("install", writes=tuple(operands(rest, "")[-1:]))
    if module == "json":
        return Facts("read", reads=tuple(operands(rest, "")[:1]))
    if module in ("http", "smtpd", "ftplib", "telnetlib"):
        return Facts("unknown")
    return Facts("script", path_checked=False)  # a module of the project or its venv


def _interpreter(inline: frozenset[str]) -> Callable[[SimpleCommand], Facts]:
    """node/perl/ruby/php …: -e runs inline code; otherwise a script file is run."""

    def handler(command: SimpleCommand) -> Facts:
        if command.args[:1] and command.args[0] in _VERSION:
            return Facts("read")
        if any(
            flag.split("=", 1)[0] in inline or _clustered(flag, inline) for flag in command.flags
        ):
            return Facts("inline-code")
        found = operands(command.words[1:], "IMrx")
        if not found or found[0].value == "-" or found[0].dynamic:
            return Facts("inline-code")  # a program from standard input, or from <(…)
        return Facts("script", reads=tuple(found[:1]))

    return handler


def _clustered(flag: str, inline: frozenset[str]) -> bool:
    """perl -pe / -ne: the -e hides inside a cluster of short options."""
    return not flag.startswith("--") and any(f"-{c}" in inline for c in flag[1:])


def _shell_script(command: SimpleCommand) -> Facts:
    found = operands(command.words[1:], "oO")
    if not found or found[0].dynamic:
        return Facts("inline-code")  # `source <(curl …)`: a program from a stream
    return Facts("script", reads=tuple(found[:1]))


# -- host and irreversible operations ---------------------------------------------------------

_SQL_DESTRUCTIVE = re.compile(r"\b(drop|truncate)\s+\w|\bdelete\s+from\b|\bflush(all|db)\b", re.I)
_INFRA_DESTROY = {
    "kubectl": ("delete", "drain"),
    "helm": ("uninstall", "delete"),
    "terraform": ("destroy", "-destroy"),
    "tofu": ("destroy", "-destroy"),
    "pulumi": ("destroy",),
    "docker": ("prune", "rm", "rmi", "down"),
    "podman": ("prune", "rm", "rmi"),
    "docker-compose": ("down",),
}


def _infra(command: SimpleCommand) -> Facts:
    destroys = _INFRA_DESTROY.get(command.name, ())
    if any(arg in destroys for arg in command.args):
        return Facts("unknown", harness="infra-destroy", path_checked=False)
    if command.name in ("aws", "gcloud", "az") and any(_cloud_delete(a) for a in command.args):
        return Facts("unknown", harness="infra-destroy", path_checked=False)
    return Facts("unknown", path_checked=False)


def _cloud_delete(arg: str) -> bool:
    return arg in ("delete", "rm", "rb", "terminate") or arg.startswith(("delete-", "terminate-"))


def _database(command: SimpleCommand) -> Facts:
    texts = [*command.args, *(r.target for r in command.redirects if r.op in ("<<", "<<<"))]
    if command.name in ("dropdb", "dropuser") or any(_SQL_DESTRUCTIVE.search(t) for t in texts):
        return Facts("unknown", harness="database-drop", path_checked=False)
    return Facts("unknown", path_checked=False)


def _power(command: SimpleCommand) -> Facts:
    return Facts("host", harness="power")


def _systemctl(command: SimpleCommand) -> Facts:
    power = {"poweroff", "reboot", "halt", "kexec", "suspend", "hibernate", "rescue"}
    return Facts("host", harness="power" if power & set(command.args) else "")


def _init(command: SimpleCommand) -> Facts:
    return Facts("host", harness="power" if set(command.args) & {"0", "6"} else "")


def _kill(command: SimpleCommand) -> Facts:
    # kill -1 / kill -9 -1: the target -1 is every process the user may signal.
    targets = [w.value for w in command.words[1:]]
    everything = command.name == "killall5" or "-1" in targets[1:] or targets == ["-1"]
    return Facts("host", harness="kill-all" if everything else "")


def _disk(command: SimpleCommand) -> Facts:
    devices = tuple(
        w for w in operands(command.words[1:], "tbLmLcO") if w.value.startswith("/dev/")
    )
    return Facts("host", writes=devices, harness="disk")


def _crontab(command: SimpleCommand) -> Facts:
    return Facts("host", harness="crontab-remove" if has_short(command, "r") else "")


def _shred(command: SimpleCommand) -> Facts:
    found = tuple(operands(command.words[1:], "nsu"))
    return Facts("write", writes=found, deletes=True, harness="shred")


# -- the table ----------------------------------------------------------------------------------

_READ_PLAIN = (
    "cat tac head tail wc nl rev column fold paste join cmp comm diff stat file du tree "
    "realpath readlink md5sum sha1sum sha224sum sha256sum sha384sum sha512sum b2sum cksum "
    "base64 base32 od hexdump strings ls dir vdir cut tr expand unexpand fmt pr"
)
# Short options that take a value, so that `head -n 5` does not read a file called 5.
# Only letters known to take one: a wrong letter would hide the path after it.
_READ_VALUES = {
    "head": "nc",
    "tail": "ncs",
    "cut": "dfcb",
    "du": "dBtX",
    "ls": "IwT",
    "diff": "CUIFLSxX",
    "column": "csoNRlHWE",
    "fold": "w",
    "paste": "d",
    "join": "12jteoav",
    "cmp": "in",
    "nl": "bdfhilnsvw",
    "od": "AjNtwS",
    "strings": "nte",
    "fmt": "wpg",
    "pr": "hlwoWN",
    "base64": "w",
    "stat": "c",
    "hexdump": "efns",
}
_NO_PATHS = (
    "echo printf true false : test [ [[ sleep seq expr basename dirname which type hash whoami "
    "id uname nproc locale tty uptime free ps pgrep getconf printenv env pwd dirs help read wait "
    "exit return break continue shift let set unset export declare typeset local readonly "
    "getopts logname groups arch trap alias unalias"
)
_BUILD = (
    "pytest py.test tox nox make gmake cmake ctest ninja meson bazel ruff mypy pyright black isort "
    "flake8 pylint pyflakes bandit coverage tsc eslint prettier jest vitest mocha gradle gradlew "
    "mvn mvnw dotnet rustc gcc g++ cc c++ clang clang++ javac maturin shellcheck hadolint yamllint "
    "golangci-lint clang-format clang-tidy ant sbt rake mix playwright"
)
_HOST = (
    "apt apt-get aptitude dpkg yum dnf zypper pacman apk brew snap flatpak port service launchctl "
    "pkill killall mount umount useradd userdel usermod groupadd passwd chpasswd visudo iptables "
    "nft ufw sysctl modprobe insmod rmmod swapon swapoff hwclock timedatectl hostnamectl loginctl "
    "update-alternatives ldconfig setcap chattr sudoedit su sudo doas gem"
)

_HANDLERS: dict[str, Callable[[SimpleCommand], Facts]] = {
    **{name: _simple("read", _READ_VALUES.get(name, "")) for name in _READ_PLAIN.split()},
    **{name: _simple("read", paths=False) for name in _NO_PATHS.split()},
    **{name: _unchecked("build") for name in _BUILD.split()},
    **{name: _unchecked("host") for name in _HOST.split()},
    **dict.fromkeys(("grep", "egrep", "fgrep", "zgrep"), _pattern_first("efmABCdDX", frozenset())),
    "rg": _pattern_first(
        "efgtTmABCjMrd", frozenset({"--glob", "--type", "--iglob", "--max-depth"})
    ),
    "sort": _sort,
    "uniq": _in_out("fsw"),
    "xxd": _in_out("cglso"),
    "tree": _tree,
    "find": _find,
    "sed": _sed,
    **dict.fromkeys(("awk", "gawk", "mawk", "nawk"), _awk),
    **dict.fromkeys(("jq", "yq"), _jq),
    "date": _date,
    "hostname": _hostname,
    **dict.fromkeys(("cd", "pushd", "popd"), _simple("cwd", paths=False)),
    **dict.fromkeys(("rm", "rmdir", "unlink"), _all_written("", deletes=True)),
    "touch": _all_written("dtr"),
    "mkdir": _all_written("m"),
    "truncate": _all_written("sr"),
    **dict.fromkeys(("dos2unix", "unix2dos"), _all_written()),
    "mv": _all_written("tS"),
    **dict.fromkeys(("cp", "ln", "install"), _copy),
    **dict.fromkeys(("chmod", "chown", "chgrp"), _mode_first),
    "dd": _dd,
    "tee": _tee,
    "tar": _tar,
    "unzip": _unzip,
    "zip": _zip,
    **dict.fromkeys(("gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "zstd"), _compress),
    "patch": _patch,
    "mktemp": _mktemp,
    "shred": _shred,
    "git": _git,
    "curl": _curl,
    "wget": _wget,
    **dict.fromkeys(("ping", "dig", "nslookup", "host", "traceroute"), _unchecked("network-read")),
    **dict.fromkeys(("npm", "pnpm"), _subcommands(_NPM)),
    "yarn": _subcommands(_YARN, "build"),
    "cargo": _subcommands(_CARGO),
    "go": _subcommands(_GO),
    **dict.fromkeys(("pip", "pip3"), _subcommands(_PIP)),
    "uv": _subcommands(_UV),
    "poetry": _subcommands(_POETRY),
    "pre-commit": _subcommands(_PRE_COMMIT),
    "bundle": _subcommands(_BUNDLE),
    "deno": _subcommands(_DENO, "script"),
    "bun": _subcommands(_BUN, "build"),
    "node": _interpreter(frozenset({"-e", "--eval", "-p", "--print", "-i", "--interactive"})),
    **dict.fromkeys(("perl", "ruby"), _interpreter(frozenset({"-e", "-E"}))),
    "php": _interpreter(frozenset({"-r", "-a"})),
    "lua": _interpreter(frozenset({"-e", "-i"})),
    "Rscript": _interpreter(frozenset({"-e"})),
    "osascript": _interpreter(frozenset({"-e"})),
    **dict.fromkeys(("sh", "bash", "zsh", "dash", "ksh", "ash", "mksh", "fish"), _shell_script),
    **dict.fromkeys((".", "source"), _shell_script),
    **dict.fromkeys(("ts-node", "tsx"), _interpreter(frozenset({"-e", "--eval", "-p"}))),
    **dict.fromkeys(_INFRA_DESTROY, _infra),
    **dict.fromkeys(("aws", "gcloud", "az"), _infra),
    **dict.fromkeys(
        ("psql", "mysql", "mariadb", "sqlite3", "sqlcmd", "mongo", "mongosh", "redis-cli"),
        _database,
    ),
    **dict.fromkeys(("dropdb", "dropuser"), _database),
    **dict.fromkeys(("shutdown", "reboot", "halt", "poweroff"), _power),
    **dict.fromkeys(("init", "telinit"), _init),
    "systemctl": _systemctl,
    **dict.fromkeys(("kill", "killall5"), _kill),
    **dict.fromkeys(
        ("mkfs", "mke2fs", "mkswap", "fdisk", "sfdisk", "cfdisk", "parted", "gdisk", "sgdisk"),
        _disk,
    ),
    **dict.fromkeys(("wipefs", "blkdiscard"), _disk),
    "crontab": _crontab,
}
