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
    files,
    git,
    interpreters,
    network,
    packages,
    reading,
    sed,
    system,
)
from agents_app.gate.catalog.families import Facts, Handler, floor
from agents_app.gate.shell.commands import SimpleCommand

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
