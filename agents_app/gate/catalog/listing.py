"""Commands that print names of files under directories they were given.

``find . -name '*.py' | xargs grep -l foo`` and ``wc -l $(git ls-files)`` pass names
that are known only at run time; when every command that produces them only lists
files under known directories (``find`` without options that print other text or
follow links, ``git ls-files``, ``grep -l``), possibly filtered (``grep -v``, ``head``,
``sort``), the names are judged as the directories they lie under — the way
``find … -exec cat {} +`` is. Anything else that produces them leaves them unknown.
"""

from __future__ import annotations

from agents_app.gate.catalog.options import has_short, operands
from agents_app.gate.shell.commands import SimpleCommand, Word
from agents_app.gate.shell.wrappers import find_roots

# find expressions that print text other than the names, or follow links out.
_FIND_OTHER_TEXT = frozenset(
    {"-printf", "-fprintf", "-fprint", "-fprint0", "-ls", "-fls", "-L", "-follow", "-H"}
)
# Filters of their standard input, with the short options that take a value.
_FILTERS = {"head": "nc", "tail": "ncs", "sort": "ktoST", "uniq": "fsw"}
_FILTERS |= dict.fromkeys(("grep", "egrep", "fgrep"), "efmABCdDX")
_MAX_STAGES = 8


def listed_roots(commands: tuple[SimpleCommand, ...], stages: int = 0) -> tuple[Word, ...] | None:
    """The directories the names printed by ``commands`` lie under, or None if unknown."""
    if not commands or stages > _MAX_STAGES:
        return None
    roots: list[Word] = []
    for command in commands:
        found = _roots(command, stages)
        if found is None:
            return None
        roots += found
    return tuple(roots)


def _roots(command: SimpleCommand, stages: int) -> tuple[Word, ...] | None:
    if command.via or command.assignments or command.stdin_args or not command.name:
        return None
    name, args = command.name, command.args
    if name == "find":
        if any(w.value in _FIND_OTHER_TEXT for w in command.words[1:]):
            return None
        return find_roots(command.words)
    if name == "git" and args[:1] == ("ls-files",):
        return None if any(a.startswith("--format") for a in args) else (Word("."),)
    if name == "git" and args[:1] == ("diff",) and "--name-only" in args:
        return (Word("."),)
    files = operands(command.words[1:], "efmABCdDXgtTjMr")
    if name == "rg" and "--files" in args:
        return tuple(files) or (Word("."),)
    if name in ("grep", "egrep", "fgrep", "rg") and has_short(
        command, "lL", "--files-with-matches", "--files-without-match"
    ):
        given = has_short(command, "ef", "--regexp", "--file")
        listed = files if given else files[1:]
        if listed:
            return tuple(listed)
    if name in _FILTERS and _filters_only(command):
        return listed_roots(command.upstream, stages + 1)
    return None


def _filters_only(command: SimpleCommand) -> bool:
    """A filter of its standard input: no file operand, no option that writes or runs."""
    if command.redirects or has_short(
        command, "o", "--output", "--compress-program", "--files0-from"
    ):
        return False
    found = operands(command.words[1:], _FILTERS[command.name])
    pattern = 0 if has_short(command, "ef", "--regexp", "--file") else 1
    return len(found) <= (pattern if command.name in ("grep", "egrep", "fgrep") else 0)
