"""``manage.py sf status``: the system status the dashboard shows."""

from __future__ import annotations

import argparse
from typing import Any

from dashboard_app.status import system_status
from sf_core.cli import EXIT_ERROR, EXIT_OK, Subcommand, add_output_format


class StatusCommand(Subcommand):
    name = "status"
    help = "Show the system status the dashboard shows: database, broker, workers, native."

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        add_output_format(parser)

    def run(self, options: dict[str, Any]) -> int:
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


SUBCOMMANDS: list[type[Subcommand]] = [StatusCommand]
