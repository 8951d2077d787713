"""The base of every ``manage.py sf`` subcommand: exit codes, output, ``--output-format``.

Each app lists its subcommands in ``<app>/cli.py`` as ``SUBCOMMANDS``; the project
(``sf_web/cli.py``) names those modules. A subcommand adds its arguments, then ``run``
returns the process exit code; its methods are small so a test can call them directly.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, ClassVar, Protocol

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
