"""The ``manage.py sf`` command surface: one command, subcommands from every app.

Each app lists its subcommands in ``<app>/cli.py`` as ``SUBCOMMANDS``. A
subcommand adds its arguments, then ``run`` returns the process exit code; its
methods are small so a test can call them directly.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, ClassVar, Protocol

SUBCOMMAND_MODULES = (
    "sf_web.cli",
    "agents_app.cli",
    "agents_app.gate.cli",
    "tasks_app.cli",
    "tasks_app.headless.cli",
)

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


class StatusCommand(Subcommand):
    name = "status"
    help = "Show the system status the dashboard shows: database, broker, workers, native."

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        add_output_format(parser)

    def run(self, options: dict[str, Any]) -> int:
        from sf_web.status import system_status

        status = system_status()
        if options["output_format"] == "json":
            self.out_json(status.as_json())
        else:
            self._print_text(status)
        healthy = status.database.ok and status.broker.ok and status.native.ok
        return EXIT_OK if healthy else EXIT_ERROR

    def _print_text(self, status: Any) -> None:
        for label, probe in (
            ("database", status.database),
            ("broker", status.broker),
            ("native", status.native),
        ):
            mark = "ok " if probe.ok else "BAD"
            self.out(f"{mark} {label:<9} {probe.summary} {probe.detail}".rstrip())
        self.out(f"    workers   {status.workers_online} online ({status.mode} mode)")
        for worker in status.workers:
            state = "online" if worker.online else "offline"
            self.out(f"      {worker.hostname} pid {worker.pid} {state}")


class EnsureAdminCommand(Subcommand):
    name = "ensure-admin"
    help = "Create the 'admin' superuser if missing; print where its password is."

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--username", default="admin")
        parser.add_argument(
            "--password-file",
            default=None,
            help="where a generated password is kept (default: SF_DATA_DIR/admin-password)",
        )

    def run(self, options: dict[str, Any]) -> int:
        from sf_web.accounts import admin_ensure

        result = admin_ensure(username=options["username"], password_file=options["password_file"])
        verb = "created" if result.created else "exists"
        self.out(f"admin user {result.username!r} {verb}; password in {result.password_file}")
        return EXIT_OK


SUBCOMMANDS: list[type[Subcommand]] = [StatusCommand, EnsureAdminCommand]
