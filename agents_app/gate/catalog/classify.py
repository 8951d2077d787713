"""What a shell command does, as far as the gate is concerned (DESIGN §5, layer 1).

A shell command is allowed only when ``classify`` recognises it (``ls``, ``git status``,
``pytest`` …): we match allowed commands rather than list dangerous ones, so whatever is
not known here is ``unknown``. Within a known command, the options that write or
execute (``sort -o``, ``rg --pre``, sed's ``e`` and ``w``) move it to a riskier family.
Each family module lists the commands it knows in its ``HANDLERS``.
"""

from __future__ import annotations

from dataclasses import replace

from agents_app.gate.catalog import (
    builtins,
    files,
    git,
    grammar,
    interpreters,
    network,
    packages,
    reading,
    sed,
    system,
)
from agents_app.gate.catalog.families import Facts, Handler, floor
from agents_app.gate.shell.commands import SimpleCommand, Word, copy_command

SYSTEM_BIN_DIRS = frozenset(
    {"/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin", "/usr/local/sbin"}
)

_HANDLERS: dict[str, Handler] = {
    **reading.HANDLERS,
    **sed.HANDLERS,
    **files.HANDLERS,
    **git.HANDLERS,
    **network.HANDLERS,
    **packages.HANDLERS,
    **interpreters.HANDLERS,
    **system.HANDLERS,
    **builtins.HANDLERS,
}


def classify(command: SimpleCommand) -> Facts:
    """The family and path operands of ``command`` (wrappers already peeled off)."""
    if not command.argv:
        return Facts("variables")
    handler = _HANDLERS.get(command.name)
    if handler is None and interpreters.PYTHON_NAME.fullmatch(command.name):
        handler = interpreters.python_command
    elif handler is None and command.name.startswith(("mkfs.", "mke2fs.", "fsck.")):
        handler = system.disk
    spec = grammar.table(command.name) if handler is not None else None
    if handler is None:
        facts = Facts("unknown", path_checked=False)
    elif spec is None:
        facts = handler(command)
    else:
        facts = _tabled(command, handler, spec)
    program = command.program
    if "/" in program and program.rsplit("/", 1)[0] not in SYSTEM_BIN_DIRS:
        # `./ls` is the project's program called ls, not /bin/ls: judge it as a program
        # file, and keep what its name implies (paths, harness) when that is worse.
        riskier = facts.family != "unknown" and floor(facts.family) > floor("script")
        family = facts.family if riskier else "script"
        reads = (command.words[0], *facts.reads)
        return replace(facts, family=family, reads=reads, path_checked=True)
    return facts


def _tabled(command: SimpleCommand, handler: Handler, spec: grammar.Table) -> Facts:
    """A command whose options the gate has a table of: an option not in it asks; the
    handler sees the options spelled in full, and the files options name are paths."""
    parsed = grammar.normalize(command, spec)
    if parsed.unknown:
        return Facts("unknown-option", path_checked=False, detail=parsed.unknown)
    if parsed.words != command.words:
        command = copy_command(command, parsed.words)
    facts = handler(command)
    effects = grammar.effects(command.name)
    reads, writes, family = list(facts.reads), list(facts.writes), facts.family
    for option, value in parsed.options:
        effect = effects.get(option, "")
        if value is None or value.value == "-":
            continue
        if effect == "exec":
            return Facts("inline-code", reads=tuple(reads))
        if effect == "host":
            family = "host"
        elif effect == "write" and value not in writes:
            writes.append(value)
        elif effect in ("read", "send") or (_path_like(value) and value not in writes):
            reads.extend(() if value in reads else (value,))
            family = "network-write" if effect == "send" else family
    if family == "read" and writes:
        family = "write"
    return replace(facts, family=family, reads=tuple(reads), writes=tuple(writes))


def _path_like(word: Word) -> bool:
    """A value that names a file outside the working directory (a safety net for the
    options whose values the tables take to be no file)."""
    value = word.value
    return value.startswith(("/", "~", "../")) or value == ".." or "/../" in value
