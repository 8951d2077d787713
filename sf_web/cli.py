"""The ``manage.py sf`` command surface: one command, subcommands from every app.

Each app lists its subcommands in ``<app>/cli.py`` as ``SUBCOMMANDS``; this module
names those modules (the project is the one place that knows every app).
"""

from __future__ import annotations

import argparse
from typing import Any

from sf_core.cli import EXIT_OK, Subcommand
from sf_web.accounts import admin_ensure

SUBCOMMAND_MODULES = (
    "sf_web.cli",
    "dashboard_app.cli",
    "agents_app.cli",
    "agents_app.gate.cli",
    "tasks_app.surfaces.cli",
    "tasks_app.features.headless.cli",
    "tasks_app.surfaces.skills_cli",
    "tasks_app.features.schedules.cli",
    "tasks_app.features.followups.cli",
    "tasks_app.features.issues.cli",
    "mcp_app.cli",
)


class EnsureAdminCommand(Subcommand):
    name = "ensure-admin"
    help = "Create the 'admin' superuser if missing; say where its password comes from."

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--username", default="admin")
        parser.add_argument(
            "--password-file",
            default=None,
            help="where a generated password is kept (default: SF_DATA_DIR/admin-password)",
        )

    def run(self, options: dict[str, Any]) -> int:
        result = admin_ensure(username=options["username"], password_file=options["password_file"])
        self.out(result.describe())
        return EXIT_OK


SUBCOMMANDS: list[type[Subcommand]] = [EnsureAdminCommand]
