"""``python manage.py sf <subcommand> …`` — SF's command-line surface."""

from __future__ import annotations

import importlib
import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from sf_core.cli import Subcommand
from sf_web.cli import SUBCOMMAND_MODULES


def _subcommands() -> dict[str, type[Subcommand]]:
    found: dict[str, type[Subcommand]] = {}
    for module_name in SUBCOMMAND_MODULES:
        module = importlib.import_module(module_name)
        for command in module.SUBCOMMANDS:
            found[command.name] = command
    return found


class Command(BaseCommand):
    help = "SF: status, sessions, plans, tasks, the gate, headless runs."
    requires_system_checks: list[str] = []  # subcommands check what they need

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="subcommand", metavar="SUBCOMMAND", required=True)
        for name, command in _subcommands().items():
            child = sub.add_parser(name, help=command.help, description=command.help)
            command().add_arguments(child)

    def handle(self, *args: Any, **options: Any) -> None:
        command_class = _subcommands()[options["subcommand"]]
        command = command_class(stdout=self.stdout, stderr=self.stderr)
        code = command.run(options)
        if code:
            sys.stdout.flush()
            raise SystemExit(code)
