"""The values the shell analysis produces: words, redirects and simple commands.

Pure data: no parser, no filesystem. ``make_command`` fills in what a command's words
imply (its name, argv, canonical text), so every producer builds commands the same way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Wrappers that run their command with more privilege than the agent has.
PRIVILEGED_WRAPPERS = frozenset({"sudo", "doas", "su", "runuser", "pkexec", "chroot", "nsenter"})
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "ash", "mksh", "fish", "busybox-sh"})
HARMLESS_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})
# Builtins that assign a variable whose name may be built at run time (`declare
# "${x:1}=…"`, `printf -v`, `read`), and indirect expansion: where one appears, no
# variable's value is taken as known (a loop variable, $PWD).
NAMES_ASSIGNED_AT_RUN_TIME = re.compile(
    r"\b(?:declare|typeset|local|export|readonly|printf|read|mapfile|readarray|getopts|wait)\b"
    r"|\$\{!"
)


@dataclass(frozen=True, slots=True)
class Word:
    """One shell word: its decoded value, or its source text when not static."""

    value: str
    dynamic: bool = False  # parameter, command, arithmetic or brace expansion
    glob: bool = False  # unquoted * ? [ (pathname expansion)
    stream: bool = False  # <(…): a pipe from a command the analysis lists on its own


@dataclass(frozen=True, slots=True)
class Redirect:
    op: str  # >, >>, &>, <, <<, <<<, …
    target: str  # file as written (decoded); here-doc/here-string: the text fed to stdin
    dynamic: bool = False
    writes: bool = False  # opens a file for writing (not a fd dup, not /dev/null)


@dataclass(frozen=True, slots=True)
class SimpleCommand:
    """One command that would run, after wrappers were peeled off."""

    name: str  # basename of argv[0] ("" when unknown until run time, or none)
    words: tuple[Word, ...]
    argv: tuple[str, ...]
    text: str  # canonical form for rules: the wrappers (via) then argv
    dynamic: bool  # some word, or some argument appended at run time, is not static
    assignments: tuple[str, ...] = ()  # names of VAR=value prefixes (or a bare assignment)
    redirects: tuple[Redirect, ...] = ()
    via: tuple[str, ...] = ()  # wrappers peeled to reach it, outermost first
    function: str = ""  # the function whose body holds it
    stdin_args: bool = False  # xargs / find -exec add arguments at run time
    # What writes its standard input: the commands of the previous stage of its pipeline.
    upstream: tuple[SimpleCommand, ...] = ()

    @property
    def program(self) -> str:
        """argv[0] as written, e.g. ``/bin/rm`` or ``./rm``."""
        return self.argv[0] if self.argv else ""

    @property
    def args(self) -> tuple[str, ...]:
        return self.argv[1:]

    @property
    def flags(self) -> tuple[str, ...]:
        """Arguments that look like options, up to ``--``."""
        found: list[str] = []
        for arg in self.argv[1:]:
            if arg == "--":
                break
            if arg.startswith("-") and arg != "-":
                found.append(arg)
        return tuple(found)


@dataclass(frozen=True, slots=True)
class ShellAnalysis:
    source: str
    commands: tuple[SimpleCommand, ...]
    redirects: tuple[Redirect, ...]  # every redirect, also those of { …; } > f
    opaque: bool = False
    opaque_kind: str = ""  # parse-error, dynamic-command, dynamic-script, stdin-program, …
    reason: str = ""


def make_command(
    words: list[Word] | tuple[Word, ...],
    *,
    assignments: tuple[str, ...] = (),
    redirects: tuple[Redirect, ...] = (),
    via: tuple[str, ...] = (),
    function: str = "",
    stdin_args: bool = False,
    upstream: tuple[SimpleCommand, ...] = (),
) -> SimpleCommand:
    """A SimpleCommand with its derived fields (name, argv, text, dynamic) filled in."""
    argv = tuple(word.value for word in words)
    first = words[0] if words else None
    name = "" if first is None or first.dynamic or first.glob else first.value.rsplit("/", 1)[-1]
    dynamic = stdin_args or any(w.dynamic or w.glob for w in words)
    text = " ".join((*via, *argv))
    return SimpleCommand(
        name,
        tuple(words),
        argv,
        text,
        dynamic,
        assignments,
        redirects,
        via,
        function,
        stdin_args,
        upstream,
    )


def with_upstream(command: SimpleCommand, upstream: tuple[SimpleCommand, ...]) -> SimpleCommand:
    """The same command reading the output of ``upstream`` (dataclasses.replace is
    several times slower, and this runs for every stage of every pipeline)."""
    c = command
    return SimpleCommand(
        c.name,
        c.words,
        c.argv,
        c.text,
        c.dynamic,
        c.assignments,
        c.redirects,
        c.via,
        c.function,
        c.stdin_args,
        upstream,
    )


def copy_command(
    command: SimpleCommand,
    words: tuple[Word, ...] | None = None,
    via: tuple[str, ...] = (),
    assignments: tuple[str, ...] = (),
) -> SimpleCommand:
    """The same command with other words, more wrappers in front and/or more variables."""
    return make_command(
        command.words if words is None else words,
        assignments=(*assignments, *command.assignments),
        redirects=command.redirects,
        via=(*via, *command.via),
        function=command.function,
        stdin_args=command.stdin_args,
        upstream=command.upstream,
    )
