"""The base of every ``manage.py sf`` subcommand: exit codes, output, ``--output-format``.

Each app lists its subcommands in ``<app>/cli.py`` as ``SUBCOMMANDS``; the project
(``sf_web/cli.py``) names those modules. A subcommand adds its arguments, then ``run``
returns the process exit code; its methods are small so a test can call them directly.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Mapping
from typing import Any, ClassVar, Protocol

from django.contrib.auth import get_user_model

from sf_core.actors import Actor
from sf_core.errors import SfError

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2


class Writer(Protocol):
    def write(self, text: str, /) -> object: ...


class Subcommand:
    name: ClassVar[str]
    help: ClassVar[str]

    def __init__(self, stdout: Writer | None = None, stderr: Writer | None = None) -> None:
        self.stdout: Writer = stdout or sys.stdout
        self.stderr: Writer = stderr or sys.stderr

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """Declare this subcommand's arguments."""

    def run(self, options: dict[str, Any]) -> int:
        raise NotImplementedError

    @staticmethod
    def add_actions(
        parser: argparse.ArgumentParser, actions: Mapping[str, str], *, required: bool = True
    ) -> dict[str, argparse.ArgumentParser]:
        """``sf NAME ACTION ...``: one sub-parser per action (name -> its help), chosen in
        ``options["action"]``, each with ``--output-format`` and ``--as``. Returns them
        by name, for their own arguments."""
        chooser = parser.add_subparsers(dest="action", required=required)
        made: dict[str, argparse.ArgumentParser] = {}
        for name, text in actions.items():
            made[name] = chooser.add_parser(name, help=text)
            add_output_format(made[name])
            add_acting_user(made[name])
        return made

    def out(self, text: str = "") -> None:
        self.stdout.write(text + "\n")

    def err(self, text: str) -> None:
        self.stderr.write(text + "\n")

    def out_json(self, data: Any) -> None:
        self.out(json.dumps(data, sort_keys=True, default=str))


def add_output_format(parser: argparse.ArgumentParser, *choices: str) -> None:
    parser.add_argument(
        "--output-format",
        choices=choices or ("text", "json"),
        default="text",
        help="text for people (default) or machine-readable output",
    )


ACTING_USER_ENV = "SF_USER"


def add_acting_user(parser: argparse.ArgumentParser) -> None:
    """``--as USERNAME`` (alias ``--user``): act as a person, under SF's access rules.

    Without it, ``$SF_USER``; without that, the command acts as SF's operator account
    (``Actor.system("cli")``): the shell of the server's owner, who has the database and
    the files already, and whom project roles do not bind."""
    parser.add_argument(
        "--as",
        "--user",
        dest="acting_user",
        metavar="USERNAME",
        # Absent unless given: a subcommand's parser must not reset a --as given to its
        # parent (argparse copies a subparser's defaults over the parent's values).
        default=argparse.SUPPRESS,
        help=f"act as this user, with their project roles (default: ${ACTING_USER_ENV}; "
        "unset: SF's operator account)",
    )


def acting_username(options: dict[str, Any]) -> str | None:
    name = options.get("acting_user") or os.environ.get(ACTING_USER_ENV, "")
    return name.strip() or None


def acting_actor(options: dict[str, Any], label: str = "cli") -> Actor:
    """The person named by ``--as``/``SF_USER``, or SF itself (``label``) when none is."""
    username = acting_username(options)
    if username is None:
        return Actor.system(label)
    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        raise SfError(f"no user named {username!r}")
    if not user.is_active:
        raise SfError(f"user {username!r} is inactive")
    return Actor.of(user)
