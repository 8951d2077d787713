"""Reading a command's options and operands the way the command itself would.

Each helper is told which options take a value, so that ``head -n 5`` does not read a
file called 5 and ``grep -e PATTERN FILE`` does not read one called PATTERN.
"""

from __future__ import annotations

from collections.abc import Iterable

from agents_app.gate.catalog.families import Facts, Handler
from agents_app.gate.shell.commands import SimpleCommand, Word

# Arguments that only print a version or help, whatever the tool.
VERSION = frozenset({"--version", "-V", "--help", "-h", "version", "help"})


def names(text: str) -> frozenset[str]:
    """The set of the space-separated names in ``text``."""
    return frozenset(text.split())


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


def simple(family: str, values: str = "", paths: bool = True) -> Handler:
    """A command of one family whose operands are paths it reads (unless ``paths``)."""

    def handler(command: SimpleCommand) -> Facts:
        reads = tuple(operands(command.words[1:], values)) if paths else ()
        return Facts(family, reads=reads)

    return handler


def unchecked(family: str) -> Handler:
    """A family whose operands are not known: path-like ones are checked anyway."""
    return lambda command: Facts(family, path_checked=False)
