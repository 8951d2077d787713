"""Interpreters: a script file of the project runs; inline code cannot be inspected.

``python -c``, ``node -e``, ``perl -pe`` and a program read from standard input are
``inline-code``; ``python -m MODULE`` is judged by the module (pytest builds, pip
installs).
"""

from __future__ import annotations

import re

from agents_app.gate.catalog.families import Facts, Handler
from agents_app.gate.catalog.options import VERSION, names, operands
from agents_app.gate.catalog.packages import PIP
from agents_app.gate.shell.commands import SimpleCommand, Word

_PYTHON_BUILD_MODULES = names(
    "pytest unittest doctest coverage mypy ruff black isort flake8 pylint pyflakes "
    "pycodestyle pydocstyle bandit tox nox build compileall py_compile pyright"
)
PYTHON_NAME = re.compile(r"(python|pypy)[0-9.]*")
# Standard modules whose arguments are code (timeit's statements, pdb's commands) or
# that read code from standard input (code, asyncio, sqlite3's shell).
_PYTHON_CODE_MODULES = names("timeit pdb code asyncio idlelib sqlite3 runpy")


def python_command(command: SimpleCommand) -> Facts:
    """python, python3.11, pypy …: a script, a module (-m), or inline code (-c, stdin)."""
    words = command.words
    index, isolated = 1, False
    while index < len(words):
        value = words[index].value
        cluster = value[1:] if value.startswith("-") and not value.startswith("--") else ""
        if "c" in cluster or "i" in cluster:
            return Facts("inline-code")  # -c CODE, also inside a cluster (-Ic); -i: a REPL
        isolated = isolated or "I" in cluster.split("m", 1)[0]
        if "m" in cluster:
            attached = cluster.split("m", 1)[1]
            module = attached or (words[index + 1].value if index + 1 < len(words) else "")
            rest = command.words[index + (1 if attached else 2) :]
            return _python_module(module.split(".")[0], rest, isolated)
        if value in VERSION:
            return Facts("read")
        if not value.startswith("-") or value == "-":
            break
        index += 2 if value in ("-W", "-X", "-Q") else 1
    if index >= len(words) or words[index].value == "-" or words[index].dynamic:
        return Facts("inline-code")  # a program from standard input, or from <(…)
    return Facts("script", reads=(words[index],))


def _python_module(module: str, rest: tuple[Word, ...], isolated: bool) -> Facts:
    if module in _PYTHON_CODE_MODULES:
        return Facts("inline-code")
    if module in _PYTHON_BUILD_MODULES:
        return Facts("build", path_checked=False)
    if module == "pip":
        sub = next((w.value for w in rest if not w.value.startswith("-")), "")
        family = PIP.get(sub, "unknown")
        # Without -I the working directory comes first: a pip/ there runs instead.
        family = "script" if family == "read" and not isolated else family
        return Facts(family, path_checked=False)
    if module in ("venv", "virtualenv"):
        return Facts("install", writes=tuple(operands(rest, "")[-1:]))
    if module == "json" and isolated:
        # Without -I, the working directory comes first on sys.path: a json.py there
        # (plans/ is writable under restricted) would run instead of the standard one.
        return Facts("read", reads=tuple(operands(rest, "")[:1]))
    if module in ("http", "smtpd", "ftplib", "telnetlib"):
        return Facts("unknown")
    return Facts("script", path_checked=False)  # a module of the project or its venv


def _interpreter(inline: frozenset[str]) -> Handler:
    """node/perl/ruby/php …: -e runs inline code; otherwise a script file is run."""

    def handler(command: SimpleCommand) -> Facts:
        if command.args[:1] and command.args[0] in VERSION:
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


HANDLERS: dict[str, Handler] = {
    "node": _interpreter(frozenset({"-e", "--eval", "-p", "--print", "-i", "--interactive"})),
    **dict.fromkeys(("perl", "ruby"), _interpreter(frozenset({"-e", "-E"}))),
    "php": _interpreter(frozenset({"-r", "-a"})),
    "lua": _interpreter(frozenset({"-e", "-i"})),
    "Rscript": _interpreter(frozenset({"-e"})),
    "osascript": _interpreter(frozenset({"-e"})),
    **dict.fromkeys(("sh", "bash", "zsh", "dash", "ksh", "ash", "mksh", "fish"), _shell_script),
    **dict.fromkeys((".", "source"), _shell_script),
    **dict.fromkeys(("ts-node", "tsx"), _interpreter(frozenset({"-e", "--eval", "-p"}))),
}
