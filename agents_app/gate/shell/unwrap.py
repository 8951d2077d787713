"""How a wrapper is read: its own options, then the command it runs.

A wrapper (``env``, ``timeout``, ``uv run`` …) is judged by what it runs. The functions
here build unwrappers from a description of the wrapper's options; each unwrapper hands
the inner command back to an ``Unwrapper`` (the analysis emitting commands), which
judges it as if it stood alone.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from agents_app.gate.shell.commands import Redirect, SimpleCommand, Word


class Unwrapper(Protocol):
    """What an unwrapper may do with the command it peels (see ``emit.Emitter``)."""

    def add(self, command: SimpleCommand) -> None: ...

    def fail(self, kind: str, reason: str) -> None: ...

    def emit(
        self,
        words: list[Word],
        assignments: tuple[str, ...],
        redirects: tuple[Redirect, ...],
        via: tuple[str, ...],
        stdin_args: bool = False,
    ) -> None: ...

    def rewrap(
        self,
        command: SimpleCommand,
        rest: tuple[Word, ...],
        label: str,
        assignments: tuple[str, ...] = (),
        stdin_args: bool = False,
        chdir: Word | None = None,
        output: Word | None = None,
    ) -> None: ...

    def script_text(self, command: SimpleCommand, words: tuple[Word, ...], label: str) -> None: ...

    def inner(
        self, source: str, via: tuple[str, ...], assignments: tuple[str, ...] = ()
    ) -> None: ...


Unwrap = Callable[[Unwrapper, SimpleCommand], None]


def after_options(
    words: tuple[Word, ...], start: int, short: str = "", long: frozenset[str] = frozenset()
) -> int:
    """Index of the first operand after a wrapper's own options.

    ``short`` lists option letters that take a value (``-u root`` or ``-uroot``);
    ``long`` lists long options that take one when not written ``--opt=value``.
    """
    index = start
    while index < len(words):
        value = words[index].value
        if value == "--":
            return index + 1
        if not value.startswith("-") or value == "-":
            return index
        if value.startswith("--"):
            index += 2 if value in long else 1
            continue
        index += 1
        for position, letter in enumerate(value[1:], start=1):
            if letter in short:
                index += 1 if position == len(value) - 1 else 0
                break
    return index


def prefix(
    short: str = "",
    long: tuple[str, ...] = (),
    operands: int = 0,
    chdir: tuple[str, str] = ("", ""),
    output: tuple[str, str] = ("", ""),
) -> Unwrap:
    """A wrapper of the form ``wrapper [options] [N operands] command [args]``.

    ``chdir``/``output`` name its options (short, long) that set the directory the
    command runs in, or a file the wrapper writes.
    """
    long_set = frozenset(long)

    def unwrap(walker: Unwrapper, command: SimpleCommand) -> None:
        words = command.words
        end = after_options(words, 1, short, long_set)
        walker.rewrap(
            command,
            words[end + operands :],
            command.name,
            chdir=option_word(words, end, *chdir),
            output=option_word(words, end, *output),
        )

    return unwrap


def option_word(words: tuple[Word, ...], end: int, short: str, long: str) -> Word | None:
    """The value of a wrapper's own option (among ``words[1:end]``).

    ``end`` may lie past the last word: an option whose value is missing (``env -C``)."""
    for index in range(1, min(end, len(words))):
        value = words[index].value
        if value and value in (short, long) and index + 1 < len(words):
            return words[index + 1]
        if long and value.startswith(long + "="):
            return Word(value.split("=", 1)[1], words[index].dynamic)
        if short and value.startswith(short) and len(value) > 2 and value[1] != "-":
            return Word(value[2:], words[index].dynamic)
    return None


def runner(subcommand: str, short: str = "", long: tuple[str, ...] = ()) -> Unwrap:
    """``tool SUBCOMMAND [options] command`` (uv run, poetry run, …): the runner is judged
    itself (it resolves the name in the project's environment, and may install it
    first), and so is the command it runs."""
    long_set = frozenset(long)

    def unwrap(walker: Unwrapper, command: SimpleCommand) -> None:
        words = command.words
        walker.add(command)
        if len(words) < 2 or words[1].value != subcommand:
            return
        start = after_options(words, 2, short, long_set)
        walker.rewrap(command, words[start:], f"{command.name} {subcommand}")

    return unwrap
