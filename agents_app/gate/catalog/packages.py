"""Build tools and package managers: building and testing, or installing.

Tools whose first operand picks what they do (``npm install``, ``cargo build``) are
read through their subcommand tables; installing outside the project (``-g``,
``--user``) changes the host.
"""

from __future__ import annotations

from agents_app.gate.catalog.families import Facts, Handler
from agents_app.gate.catalog.options import VERSION, has_short, names, operands, unchecked
from agents_app.gate.shell.commands import SimpleCommand

_BUILD = (
    "pytest py.test tox nox make gmake cmake ctest ninja meson bazel ruff mypy pyright black isort "
    "flake8 pylint pyflakes bandit coverage tsc eslint prettier jest vitest mocha gradle gradlew "
    "mvn mvnw dotnet rustc gcc g++ cc c++ clang clang++ javac maturin shellcheck hadolint yamllint "
    "golangci-lint clang-format clang-tidy ant sbt rake mix playwright"
)


def _subcommands(table: dict[str, str], default: str = "unknown") -> Handler:
    """Tools whose first operand picks what they do (cargo build, npm install …)."""

    def handler(command: SimpleCommand) -> Facts:
        if command.args[:1] and command.args[0] in VERSION:
            return Facts("read")
        found = operands(command.words[1:], "C")
        sub = found[0].value if found else ""
        family = table.get(sub, table.get("", default) if not sub else default)
        if family == "install" and has_short(
            command, "g", "--global", "--user", "--target", "--root"
        ):
            family = "host"  # outside the project: global or per-user installs
        return Facts(family, path_checked=False)

    return handler


_NPM = dict.fromkeys(
    names("test t tst run run-script start stop restart build lint rebuild pack"), "build"
)
_NPM |= dict.fromkeys(
    names("install i ci add remove rm uninstall un update up upgrade prune dedupe"), "install"
)
_NPM |= dict.fromkeys(names("ls list view info outdated why explain audit"), "read")
_NPM |= dict.fromkeys(names("exec x dlx create init"), "inline-code")  # fetch and run a package
_YARN = {**_NPM, "": "install"}  # bare `yarn` installs; `yarn NAME` runs a package script
_CARGO = dict.fromkeys(
    names("build b test t check c clippy fmt run r doc bench fix clean nextest"), "build"
)
_CARGO |= dict.fromkeys(
    names("fetch update add remove generate-lockfile vendor install"), "install"
)
_CARGO |= dict.fromkeys(names("tree metadata search locate-project"), "read")
_GO = dict.fromkeys(names("build test vet fmt run generate tool clean"), "build")
_GO |= dict.fromkeys(names("mod get install work"), "install")
_GO |= {"list": "read", "version": "read", "doc": "read"}
PIP = dict.fromkeys(names("install uninstall download wheel"), "install")
PIP |= dict.fromkeys(names("list show freeze check debug index inspect"), "read")
# `uv run`, `poetry run` …: the runner syncs the project's environment (an install)
# and resolves the name there; what it runs is judged on its own as well.
_UV = {"pip": "install", "sync": "install", "lock": "install", "add": "install", "run": "install"}
_UV |= {"remove": "install", "venv": "install", "build": "build", "tree": "read"}
_POETRY = dict.fromkeys(names("install add remove update lock sync"), "install")
_POETRY |= {"build": "build", "check": "build", "show": "read", "run": "install"}
_RUNNERS = {"run": "install"}
_PRE_COMMIT = {"run": "build", "autoupdate": "install", "install": "git-config"}
_BUNDLE = {"install": "install", "update": "install", "exec": "build", "": "install"}
_DENO = dict.fromkeys(names("test check lint fmt bench doc"), "build")
_DENO |= {"install": "install", "add": "install", "run": "script", "eval": "inline-code"}
_BUN = {**_DENO, "x": "inline-code", "i": "install", "remove": "install", "build": "build"}


HANDLERS: dict[str, Handler] = {
    **{name: unchecked("build") for name in _BUILD.split()},
    **dict.fromkeys(("npm", "pnpm"), _subcommands(_NPM)),
    "yarn": _subcommands(_YARN, "build"),
    "cargo": _subcommands(_CARGO),
    "go": _subcommands(_GO),
    **dict.fromkeys(("pip", "pip3"), _subcommands(PIP)),
    "uv": _subcommands(_UV),
    "poetry": _subcommands(_POETRY),
    **dict.fromkeys(("pipenv", "pdm", "hatch", "conda"), _subcommands(_RUNNERS)),
    # They download a package by name and run it: code the gate cannot inspect.
    **dict.fromkeys(("npx", "pnpx", "bunx", "uvx", "pipx"), unchecked("inline-code")),
    "pre-commit": _subcommands(_PRE_COMMIT),
    "bundle": _subcommands(_BUNDLE),
    "deno": _subcommands(_DENO, "script"),
    "bun": _subcommands(_BUN, "build"),
}
