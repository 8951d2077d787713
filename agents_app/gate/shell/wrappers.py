"""The wrappers the analysis sees through, and what each one runs.

``UNWRAP`` maps a command name to the function that peels it: privilege wrappers
(``sudo``, ``su``), process wrappers (``env``, ``timeout``, ``xargs``, ``find -exec``),
runners (``uv run``, ``npx``) and everything that runs a script given as text (``sh -c``,
``eval``, ``trap``, ``alias``, ``watch``). A script given as text is analysed in turn.
"""

from __future__ import annotations

import re

from agents_app.gate.shell.commands import SHELLS, SimpleCommand, Word, copy_command
from agents_app.gate.shell.unwrap import (
    Unwrap,
    Unwrapper,
    after_options,
    option_word,
    prefix,
    runner,
)

_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


def _sudo(walker: Unwrapper, command: SimpleCommand) -> None:
    words = command.words
    start = after_options(words, 1, "ugCDprtTUR", frozenset({"--user", "--group", "--chdir"}))
    options = {w.value for w in words[1:start]}
    if options & {"-e", "--edit"}:
        walker.add(copy_command(command, (Word("sudoedit"), *words[start:])))
    elif options & {"-s", "-i", "--shell", "--login"}:
        if start >= len(words):
            walker.add(command)
            walker.fail("stdin-program", f"{command.name} opens an interactive shell")
        else:
            walker.script_text(command, words[start:], command.name)
    else:
        chdir = option_word(words, start, "-D", "--chdir")
        walker.rewrap(command, words[start:], command.name, chdir=chdir)


def _env(walker: Unwrapper, command: SimpleCommand) -> None:
    words = command.words
    start = after_options(words, 1, "uCSP", frozenset({"--unset", "--chdir", "--split-string"}))
    for index, word in enumerate(words[1:start], start=1):
        split = _split_string(word.value, words[index + 1 : index + 2])
        if split is not None:
            walker.script_text(command, (*split, *words[start:]), "env -S")
            return
    assignments = list(command.assignments)
    while start < len(words) and _ASSIGNMENT.match(words[start].value):
        assignments.append(words[start].value.split("=", 1)[0])
        start += 1
    chdir = option_word(words, start, "-C", "--chdir")
    walker.rewrap(command, words[start:], "env", assignments=tuple(assignments), chdir=chdir)


def _split_string(option: str, following: tuple[Word, ...]) -> tuple[Word, ...] | None:
    """The words of ``env -S STRING`` (a second command line), if this option is -S."""
    if option in ("-S", "--split-string"):
        return following
    if option.startswith("--split-string="):
        return (Word(option.split("=", 1)[1]),)
    if option.startswith("-S"):
        return (Word(option[2:]),)
    return None


def _command_builtin(walker: Unwrapper, command: SimpleCommand) -> None:
    start = after_options(command.words, 1)
    if {"-v", "-V"} & {w.value for w in command.words[1:start]}:
        walker.add(command)  # `command -v x` only looks a name up
        return
    walker.rewrap(command, command.words[start:], "command")


def _xargs(walker: Unwrapper, command: SimpleCommand) -> None:
    long = frozenset({"--arg-file", "--delimiter", "--max-args", "--max-procs", "--max-chars"})
    start = after_options(command.words, 1, "aEdILnPs", long)
    rest = command.words[start:] or (Word("echo"),)
    walker.rewrap(command, rest, "xargs", stdin_args=True)


def _find(walker: Unwrapper, command: SimpleCommand) -> None:
    words = command.words
    kept: list[Word] = []
    actions: list[tuple[str, tuple[Word, ...]]] = []
    index = 0
    while index < len(words):
        value = words[index].value
        if value in _FIND_EXEC:
            end = index + 1
            while end < len(words) and words[end].value not in (";", "+"):
                end += 1
            actions.append((value, words[index + 1 : end]))
            index = end + 1
            continue
        kept.append(words[index])
        index += 1
    walker.add(copy_command(command, tuple(kept)))
    roots = find_roots(tuple(kept))
    # Each {} is a path at or below a root; with -L/-follow it may be anywhere.
    follows = any(w.value in ("-L", "-follow") for w in kept)
    for action, inner in actions:
        if inner:
            found = _substitute(inner, roots)
            via = (*command.via, f"find {action}")
            walker.emit(list(found), (), (), via, follows)


_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})


def find_roots(words: tuple[Word, ...]) -> tuple[Word, ...]:
    """The starting points of ``find`` (the operands before its expression)."""
    roots: list[Word] = []
    for word in words[1:]:
        if word.value.startswith(("-", "(", "!", ")")) and word.value not in (
            "-",
            "-L",
            "-H",
            "-P",
        ):
            break
        if word.value not in ("-L", "-H", "-P"):
            roots.append(word)
    return tuple(roots) or (Word("."),)


def _substitute(words: tuple[Word, ...], roots: tuple[Word, ...]) -> tuple[Word, ...]:
    """Replace ``{}`` by the roots; any other use of ``{}`` is only known at run time."""
    out: list[Word] = []
    for word in words:
        if word.value == "{}":
            out.extend(roots)
        elif "{}" in word.value:
            out.append(Word(word.value, dynamic=True))
        else:
            out.append(word)
    return tuple(out) if out != list(words) else words


def _shell(walker: Unwrapper, command: SimpleCommand) -> None:
    words = command.words
    index, inline, from_stdin = 1, False, False
    while index < len(words) and not words[index].dynamic:
        value = words[index].value
        if value in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
            index += 2
            continue
        if value in ("--", "-"):
            from_stdin = from_stdin or value == "-"
            index += 1
            break
        if not value.startswith(("-", "+")) or value == "+":
            break
        if value[0] == "-" and not value.startswith("--"):
            inline = inline or "c" in value
            from_stdin = from_stdin or "s" in value or "i" in value
        index += 1
    if index < len(words) and words[index].dynamic:
        walker.add(command)
        walker.fail("dynamic-script", f"{command.name} runs a script known only at run time")
    elif inline:
        walker.script_text(command, words[index : index + 1], f"{command.name} -c")
    elif index < len(words) and not from_stdin:
        walker.add(command)  # runs a script file; the catalog judges it
    else:
        _shell_stdin(walker, command)


def _shell_stdin(walker: Unwrapper, command: SimpleCommand) -> None:
    fed = [r for r in command.redirects if r.op in ("<<", "<<<")]
    if fed and not fed[-1].dynamic:
        walker.inner(fed[-1].target, (*command.via, f"{command.name} <<"), command.assignments)
        return
    walker.add(command)
    walker.fail("stdin-program", f"{command.name} reads its program from standard input")


def _su(walker: Unwrapper, command: SimpleCommand) -> None:
    words = command.words
    for index, word in enumerate(words):
        if word.value in ("-c", "--command") and index + 1 < len(words):
            walker.script_text(command, words[index + 1 : index + 2], command.name)
            return
    if command.name == "runuser" and "-u" in command.argv:
        walker.rewrap(command, words[after_options(words, 1, "ugG") :], "runuser")
        return
    walker.add(command)
    walker.fail("stdin-program", f"{command.name} opens an interactive shell")


def _eval(walker: Unwrapper, command: SimpleCommand) -> None:
    walker.script_text(command, command.words[1:], "eval")


def _trap(walker: Unwrapper, command: SimpleCommand) -> None:
    """`trap ACTION SIGNAL…`: the action is a script run later."""
    found = [w for w in command.words[1:] if w.value not in ("-p", "-l", "--")]
    if len(found) < 2 or found[0].value == "-":
        walker.add(command)
        return
    walker.script_text(command, tuple(found[:1]), "trap")


def _alias(walker: Unwrapper, command: SimpleCommand) -> None:
    """`alias name=value`: the value runs wherever the name is used."""
    walker.add(command)
    for word in command.words[1:]:
        if "=" in word.value:
            value = word.value.split("=", 1)[1]
            walker.script_text(command, (Word(value, word.dynamic, word.glob),), "alias")


def _watch(walker: Unwrapper, command: SimpleCommand) -> None:
    words = command.words
    start = after_options(words, 1, "nq", frozenset({"--interval"}))
    if {"-x", "--exec"} & {w.value for w in words[1:start]}:
        walker.rewrap(command, words[start:], "watch")
    elif start < len(words):
        walker.script_text(command, words[start:], "watch")
    else:
        walker.add(command)


def _busybox(walker: Unwrapper, command: SimpleCommand) -> None:
    walker.rewrap(command, command.words[1:], "busybox")


def _flock(walker: Unwrapper, command: SimpleCommand) -> None:
    words = command.words
    start = after_options(words, 1, "wEc", frozenset({"--timeout", "--conflict-exit-code"}))
    for index, word in enumerate(words[1:start], start=1):
        if word.value in ("-c", "--command"):
            walker.script_text(command, words[index + 1 : index + 2], "flock -c")
            return
    lock = words[start] if start < len(words) else None  # created if missing
    walker.rewrap(command, words[start + 1 :], "flock", output=lock)


_UV_RUN_VALUES: tuple[str, ...] = (
    "--with",
    "--python",
    "--directory",
    "--project",
    "--extra",
    "--group",
)
_UV_RUN_VALUES += ("--env-file", "--package", "--index", "--with-requirements")


def _fetcher(unwrap: Unwrap) -> Unwrap:
    """npx, uvx, bunx …: they may download the package they run. The runner is judged
    itself (the catalog: code that cannot be inspected), then what it runs."""

    def fetch(walker: Unwrapper, command: SimpleCommand) -> None:
        walker.add(command)
        unwrap(walker, command)

    return fetch


def _npx(walker: Unwrapper, command: SimpleCommand) -> None:
    words = command.words
    start = after_options(words, 1, "pc", frozenset({"--package", "--call"}))
    for index, word in enumerate(words[1:start], start=1):
        if word.value in ("-c", "--call"):  # runs a shell command line
            walker.script_text(command, words[index + 1 : index + 2], "npx -c")
            return
    walker.rewrap(command, words[start:], "npx")


UNWRAP: dict[str, Unwrap] = {
    "sudo": _sudo,
    "doas": prefix("uC"),
    "env": _env,
    "nohup": prefix(),
    "time": prefix("fo", ("--output", "--format"), output=("-o", "--output")),
    "command": _command_builtin,
    "builtin": prefix(),
    "exec": prefix("a"),
    "nice": prefix("n", ("--adjustment",)),
    "ionice": prefix("cnpt", ("--class", "--classdata")),
    "timeout": prefix("sk", ("--signal", "--kill-after"), operands=1),
    "stdbuf": prefix("ioe", ("--input", "--output", "--error")),
    "setsid": prefix(),
    "chronic": prefix(),
    "unbuffer": prefix(),
    "coproc": prefix(),
    "torsocks": prefix(),
    "proxychains": prefix("f"),
    "proxychains4": prefix("f"),
    "strace": prefix("eoEpPsSuUXIa", output=("-o", "--output")),
    "ltrace": prefix("eoEpPsSuUXIa", output=("-o", "--output")),
    "caffeinate": prefix("tw"),
    "chroot": prefix("", ("--userspec", "--groups"), operands=1),
    "taskset": prefix("", (), operands=1),
    "nsenter": prefix("tSGnmuipUCrwFZ"),
    "unshare": prefix(),
    "pkexec": prefix("", ("--user",)),
    "xargs": _xargs,
    "find": _find,
    "su": _su,
    "runuser": _su,
    "eval": _eval,
    "trap": _trap,
    "alias": _alias,
    "watch": _watch,
    "busybox": _busybox,
    "flock": _flock,
    "uv": runner("run", "p", _UV_RUN_VALUES),
    "poetry": runner("run", "C", ("--directory", "--project")),
    "pipenv": runner("run"),
    "pdm": runner("run", "p", ("--project",)),
    "hatch": runner("run"),
    "conda": runner("run", "np", ("--name", "--prefix", "--cwd")),
    # These may download a package and run it; the catalog judges what they run.
    "npx": _fetcher(_npx),
    "pnpx": _fetcher(prefix()),
    "bunx": _fetcher(prefix("p", ("--package",))),
    "uvx": _fetcher(prefix("p", ("--from", "--with", "--python"))),
    "pipx": runner("run", "", ("--spec", "--python")),
    **dict.fromkeys(SHELLS, _shell),
}
