"""Shell builtins that assign variables, load code or re-point lookups.

``hash -p``, ``enable -f``, ``mapfile -C``, ``compgen -C``, ``fc`` and ``bind -x`` run
or load something; ``read PATH``, ``printf -v PATH``, ``getopts … PATH``, ``declare -n``
and a name built at run time change a variable the gate cannot follow (the name
decides which program a later command runs). Whatever else they do only sets shell
variables. ``loads_code`` names the variables that load code or choose programs.
"""

from __future__ import annotations

import re

from agents_app.gate.catalog.families import Facts, Handler
from agents_app.gate.catalog.options import has_short, operands
from agents_app.gate.shell.commands import SimpleCommand, Word

_LOADERS = frozenset(
    str.split(
        "PATH ENV BASH_ENV SHELLOPTS BASHOPTS PS4 PROMPT_COMMAND IFS CDPATH GLOBIGNORE HOME SHELL "
        "NODE_OPTIONS PYTHONSTARTUP PYTHONHOME PYTHONINSPECT PERL5OPT PERL5LIB PERLLIB RUBYOPT "
        "RUBYLIB JAVA_TOOL_OPTIONS _JAVA_OPTIONS JDK_JAVA_OPTIONS GCONV_PATH EDITOR VISUAL "
        "BROWSER LESSOPEN LESSCLOSE TMPDIR PYTHONUSERBASE PYTHONBREAKPOINT "
        "PYTHONPLATLIBDIR PYTHONEXECUTABLE PYTEST_ADDOPTS PYTEST_PLUGINS NODE_PATH GOFLAGS "
        "RUSTC_WRAPPER RUSTC RUSTFLAGS RUSTDOCFLAGS CC CXX LD AR CPP MAKEFLAGS MAKEFILES "
        "GNUMAKEFLAGS MFLAGS JAVA_HOME GEM_PATH GEM_HOME BUNDLE_GEMFILE CONFIG_SITE "
        "BASH_LOADABLES_PATH"
    )
)
_LOADER_PREFIXES = ("LD_", "DYLD_", "GIT_", "BASH_FUNC_", "XDG_", "CARGO_", "NPM_CONFIG_")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?")


def loads_code(name: str) -> bool:
    """Whether the variable ``name`` loads code, or chooses programs or where they look."""
    upper = name.upper()
    return (
        upper in _LOADERS
        or upper.startswith(_LOADER_PREFIXES)
        or upper.endswith(("_PROXY", "PAGER", "ASKPASS"))
    )


def _rebinds(words: list[Word]) -> bool:
    """A variable name built at run time, or one that loads code."""
    for word in words:
        name = word.value.split("=", 1)[0]
        if word.dynamic and not _NAME.fullmatch(name):
            return True
        if loads_code(name.split("[", 1)[0]):
            return True
    return False


def _facts(rebinds: bool) -> Facts:
    return Facts("rebinding" if rebinds else "variables")


def _read(command: SimpleCommand) -> Facts:
    names = operands(command.words[1:], "adinNptu")
    array = _value(command, "a")
    return _facts(_rebinds([*names, *array]))


def _value(command: SimpleCommand, letter: str) -> list[Word]:
    words = command.words
    for index, word in enumerate(words[1:-1], start=1):
        if word.value.startswith("-") and word.value.endswith(letter) and "-" not in word.value[1:]:
            return [words[index + 1]]
    return []


def _printf(command: SimpleCommand) -> Facts:
    return _facts(_rebinds(_value(command, "v")))


def _mapfile(command: SimpleCommand) -> Facts:
    if has_short(command, "C"):
        return Facts("inline-code")  # -C CALLBACK runs code every few lines
    return _facts(_rebinds(operands(command.words[1:], "dnOsuCc")[-1:]))


def _getopts(command: SimpleCommand) -> Facts:
    return _facts(_rebinds(operands(command.words[1:])[1:2]))


def _declare(command: SimpleCommand) -> Facts:
    if has_short(command, "n"):
        return Facts("rebinding")  # a name reference: assigning it assigns another name
    return _facts(_rebinds([w for w in command.words[1:] if not w.value.startswith("-")]))


def _runs(letters: str) -> Handler:
    def handler(command: SimpleCommand) -> Facts:
        return Facts("inline-code" if has_short(command, letters) else "variables")

    return handler


HANDLERS: dict[str, Handler] = {
    "read": _read,
    "printf": _printf,
    **dict.fromkeys(("mapfile", "readarray"), _mapfile),
    "getopts": _getopts,
    **dict.fromkeys(("declare", "typeset", "local", "export", "readonly"), _declare),
    "hash": _runs("p"),  # hash -p FILE NAME: NAME now runs FILE
    "enable": _runs("fn"),  # -f loads a shared object as a builtin, -n unmasks programs
    **dict.fromkeys(("compgen", "complete"), _runs("CF")),
    "bind": _runs("x"),
    "fc": lambda command: Facts("inline-code"),  # runs commands from the history
}
