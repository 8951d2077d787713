"""From the words of one simple command to the commands that would really run.

The syntax walk (``analyze``) hands each simple command's words to an ``Emitter``, which
peels wrappers off (``wrappers.UNWRAP``), analyses scripts given as text (``sh -c``,
``eval``) one level deeper, and collects the result in ``Findings``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from agents_app.gate.shell.commands import Redirect, SimpleCommand, Word, copy_command, make_command
from agents_app.gate.shell.wrappers import UNWRAP

MAX_LEVEL = 4  # nested scripts: sh -c 'sh -c …', eval, backticks in backticks
MAX_EXPANSIONS = 64  # commands a loop body's words may stand for
_REFERENCE = re.compile(r'(")?\$(?:([A-Za-z_][A-Za-z0-9_]*)|\{([A-Za-z_][A-Za-z0-9_]*)\})(?(1)")')
_IFS = re.compile(r"[ \t\n]")
_GLOB = re.compile(r"[*?\[]")
MAX_WRAPPERS = 8  # `nice nice nice …`: past this the last wrapper is judged as it is
# Bash's reserved words: never a command name in a tree that reads the script right.
_RESERVED = frozenset(
    str.split("{ } ( ) if then else elif fi do done case esac while until for select function")
) | {"in", "[[", "]]", "!"}


@dataclass
class Findings:
    """What the analysis of one script found: the commands that would run, every
    redirect, and why it cannot be seen through (``opaque``: kind and reason)."""

    commands: list[SimpleCommand] = field(default_factory=list)
    redirects: list[Redirect] = field(default_factory=list)
    opaque: tuple[str, str] | None = None

    def fail(self, kind: str, reason: str) -> None:
        # The first reason is kept: it is the one a person can act on.
        if self.opaque is None:
            self.opaque = (kind, reason)

    def add(self, command: SimpleCommand) -> None:
        self.commands.append(command)


# Analyses a script run by a command (source, nesting level, enclosing function).
NestedScript = Callable[[str, int, str], Findings]


class Emitter:
    """Emits the commands of one script into its ``Findings``, seeing through wrappers.

    ``function`` is the shell function whose body is being walked (the syntax walk sets
    it); ``nested`` analyses a script given as text, one ``level`` deeper.
    """

    def __init__(
        self, findings: Findings, level: int, function: str, nested: NestedScript, source: str = ""
    ) -> None:
        self.findings = findings
        self.level = level
        self.function = function
        self.nested = nested
        self.source = source  # the script being walked
        # Loop variables whose values are known: name -> the words it takes in turn.
        self.bindings: dict[str, tuple[Word, ...]] = {}

    def add(self, command: SimpleCommand) -> None:
        self.findings.add(command)

    def fail(self, kind: str, reason: str) -> None:
        self.findings.fail(kind, reason)

    def emit(
        self,
        words: list[Word],
        assignments: tuple[str, ...],
        redirects: tuple[Redirect, ...],
        via: tuple[str, ...],
        stdin_args: bool = False,
    ) -> None:
        """Add the command ``words`` make, or what it runs when it is a wrapper."""
        if self.bindings:
            expanded = self.expand(words)
            if expanded is not None:
                for each in expanded:
                    self.emit(each, assignments, redirects, via, stdin_args)
                return
        if words and (words[0].dynamic or words[0].glob):
            self.fail(
                "dynamic-command", f"the command name {words[0].value!r} is known only at run time"
            )
        elif words and words[0].value in _RESERVED:
            # `time { rm x; }`: the grammar reads `time` as a command and `{` as its
            # argument, so the tree no longer says what runs.
            self.fail(
                "parse-error", f"the keyword {words[0].value!r} stands where a command should"
            )
        command = make_command(
            words,
            assignments=assignments,
            redirects=redirects,
            via=via,
            function=self.function,
            stdin_args=stdin_args,
        )
        unwrap = UNWRAP.get(command.name)
        if unwrap is None or len(via) > MAX_WRAPPERS:
            self.add(command)
            return
        unwrap(self, command)

    def expand(self, words: list[Word]) -> list[list[Word]] | None:
        """The commands ``words`` stand for, one per value of each loop variable they
        use ("$f", $f, ${f}); None when they use none (or too many combinations)."""
        results: list[list[Word]] = [[]]
        used = False
        for word in words:
            found = _REFERENCE.fullmatch(word.value) if word.dynamic else None
            name = (found.group(2) or found.group(3)) if found else ""
            values = self.bindings.get(name) if name else None
            if values is None:
                results = [[*r, word] for r in results]
                continue
            if not found or (not found.group(1) and any(_IFS.search(v.value) for v in values)):
                return None  # unquoted $f splits a value with blanks into several words
            quoted = bool(found.group(1))
            each = [
                v
                if quoted
                else Word(v.value, v.dynamic, v.glob or _GLOB.search(v.value) is not None)
                for v in values
            ]
            results = [[*r, v] for r in results for v in each]
            used = True
            if len(results) > MAX_EXPANSIONS:
                return None
        return results if used else None

    def rewrap(
        self,
        command: SimpleCommand,
        rest: tuple[Word, ...],
        label: str,
        assignments: tuple[str, ...] = (),
        stdin_args: bool = False,
        chdir: Word | None = None,
        output: Word | None = None,
    ) -> None:
        """Emit the command a wrapper runs, or the wrapper itself when it runs none.

        ``chdir``: the wrapper runs it in that directory (``env -C``), recorded as a
        ``cd`` before it; ``output``: a file the wrapper writes (``strace -o``).
        """
        if not rest:
            self.add(command)
            return
        via = (*command.via, label)
        if chdir is not None:
            self.add(make_command([Word("cd"), chdir], via=via, function=self.function))
        redirects = command.redirects
        if output is not None:
            written = Redirect(">", output.value, output.dynamic, writes=True)
            self.findings.redirects.append(written)
            redirects = (*redirects, written)
        # `PATH=/x timeout 5 ls`: the variables set for the wrapper reach what it runs.
        assignments = (*command.assignments, *assignments)
        self.emit(list(rest), assignments, redirects, via, stdin_args or command.stdin_args)

    def script_text(self, command: SimpleCommand, words: tuple[Word, ...], label: str) -> None:
        """Analyse the script ``words`` spell (``sh -c WORDS``), or fail when not static."""
        if any(w.dynamic or w.glob for w in words):
            self.add(command)
            self.fail("dynamic-script", f"{label} runs a script known only at run time")
            return
        self.inner(" ".join(w.value for w in words), (*command.via, label), command.assignments)

    def inner(self, source: str, via: tuple[str, ...], assignments: tuple[str, ...] = ()) -> None:
        """Analyse a script run by another command (sh -c, eval, backticks); the
        variables set for that command (`BASH_ENV=x bash -c …`) reach each of its own."""
        if self.level >= MAX_LEVEL:
            self.fail("too-deep", "scripts are nested too deeply to analyse")
            return
        nested = self.nested(source, self.level + 1, self.function)
        for command in nested.commands:
            self.add(copy_command(command, via=via, assignments=assignments))
        self.findings.redirects.extend(nested.redirects)
        if nested.opaque:
            self.fail(*nested.opaque)
