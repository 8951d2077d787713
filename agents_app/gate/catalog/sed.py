"""sed: reading, or writing with ``-i``, unless its script runs or writes something.

A sed script may run a command (``e``, ``s///e``), write a file (``w``, ``s///w``) or
read another (``r``): only scripts that edit text are allowed, parsed exactly.
"""

from __future__ import annotations

import re

from agents_app.gate.catalog.families import Facts, Handler
from agents_app.gate.catalog.options import names
from agents_app.gate.shell.commands import SimpleCommand, Word


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
_SED_LONG = names("--quiet --silent --regexp-extended --separate --null-data --unbuffered")
_SED_LONG |= names("--posix --debug --sandbox --follow-symlinks")


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


HANDLERS: dict[str, Handler] = {
    "sed": _sed,
}
