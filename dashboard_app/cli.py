"""``manage.py sf status``: the system status the dashboard shows; ``sf metrics``: the
outcome metrics and cost roll-ups of the metrics page; ``sf doctor [--fix]``: the
health checks and their repairs (docs/doctor.md)."""

from __future__ import annotations

import argparse
from typing import Any

from agents_app.access import projects_visible
from agents_app.doctor_access import repairs_require, report_for
from agents_app.models import Project
from agents_app.services.repairs import doctor_repair
from dashboard_app.doctor import doctor_lines
from dashboard_app.metrics_report import metrics_report, report_lines, window_parse
from dashboard_app.status import system_status
from sf_core.actors import Actor
from sf_core.cli import (
    EXIT_ERROR,
    EXIT_OK,
    EXIT_USAGE,
    Subcommand,
    acting_actor,
    add_acting_user,
    add_output_format,
)
from sf_core.doctor import DoctorOutput, RepairDone, doctor_run, registered, unknown_ids
from sf_core.errors import SfError


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
            lost = ""
            if worker.live_dropped or worker.live_failed:
                lost = f", live updates {worker.live_dropped} dropped {worker.live_failed} refused"
            self.out(f"      {worker.hostname} pid {worker.pid} {state}{lost}")


class MetricsCommand(Subcommand):
    name = "metrics"
    help = "Outcome metrics and cost roll-ups (the metrics page's figures)."

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--project", help="a project's name or id (default: every project)")
        parser.add_argument("--since", help="first day, YYYY-MM-DD (default: 4 weeks ago)")
        parser.add_argument("--until", help="last day, YYYY-MM-DD (default: today)")
        parser.add_argument("--by", choices=("day", "week"), default="day")
        add_output_format(parser)
        add_acting_user(parser)

    def run(self, options: dict[str, Any]) -> int:
        """Exit 2 for a bad date or window, or an unknown acting user; 1 for a project
        that is not there (or not the acting person's to see)."""
        try:
            window = window_parse(options["since"], options["until"], options["by"])
            actor = acting_actor(options)
        except SfError as exc:
            self.err(f"error: {exc}")
            return EXIT_USAGE
        projects = projects_visible(actor.user) if actor.user else Project.objects.all()
        chosen = options["project"]
        if chosen:
            named = projects.filter(name=chosen)
            projects = (
                named if named.exists() or not chosen.isdigit() else projects.filter(pk=int(chosen))
            )
            if not projects.exists():
                self.err(f"no project {chosen!r}")
                return EXIT_ERROR
        report = metrics_report(projects, window)
        if options["output_format"] == "json":
            self.out_json(report.as_json())
        else:
            for line in report_lines(report):
                self.out(line)
        return EXIT_OK


class DoctorCommand(Subcommand):
    name = "doctor"
    help = "Check SF's health (docs/doctor.md); --fix applies the deterministic repairs."

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "--fix", action="store_true", help="apply the deterministic, idempotent repairs"
        )
        # DESIGN §8 spells it `sf doctor fix`: the same as --fix.
        parser.add_argument("action", nargs="?", choices=("fix",), help="fix: as --fix")
        parser.add_argument(
            "--check", action="append", dest="checks", metavar="ID", help="only this check"
        )
        add_output_format(parser)
        add_acting_user(parser)

    def run(self, options: dict[str, Any]) -> int:
        """Exit 0: no check at error severity (after the fixes with --fix); 1: errors
        found; 2: an unknown check id."""
        ids = options.get("checks") or None
        unknown = unknown_ids(ids or [])
        if unknown:
            known = ", ".join(check.id for check in registered())
            self.err(f"unknown check {', '.join(unknown)}; known: {known}")
            return EXIT_USAGE
        fix = options["fix"] or options.get("action") == "fix"
        try:
            actor = acting_actor(options, "doctor")
            repairs = self._repair(actor, ids) if fix else []
        except SfError as exc:
            self.err(f"error: {exc}")
            return EXIT_USAGE
        report = report_for(doctor_run(ids=ids), actor.user)
        output = DoctorOutput(report=report, repairs=repairs)
        if options["output_format"] == "json":
            self.out(output.model_dump_json())
        else:
            for line in doctor_lines(output):
                self.out(line)
        return EXIT_OK if output.report.healthy else EXIT_ERROR

    def _repair(self, actor: Actor, ids: list[str] | None) -> list[RepairDone]:
        """The fixes, once the person may run them on each project they touch."""
        wanted = repairs_require(actor, doctor_run(ids=ids))
        return doctor_repair(actor=actor, ids=wanted) if wanted else []


SUBCOMMANDS: list[type[Subcommand]] = [StatusCommand, MetricsCommand, DoctorCommand]
