"""``manage.py sf forge issues --project X``: poll the project's forge for labelled
issues once, now (the workers' sweep does it every ``SF_SWEEP_INTERVAL``)."""

from __future__ import annotations

import argparse
from typing import Any

from agents_app.access import Action, require_actor
from agents_app.cli import find_project
from sf_core.cli import EXIT_ERROR, EXIT_OK, EXIT_USAGE, Subcommand, acting_actor
from sf_core.errors import SfError
from tasks_app.features.forge import ForgeError
from tasks_app.features.issues.poll import issues_poll
from tasks_app.models import ForgeIssue


class ForgeCommand(Subcommand):
    name = "forge"
    help = "The project's forge: take its labelled issues as intents (docs/forge.md)."

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        actions = self.add_actions(
            parser, {"issues": "poll the forge's labelled issues once: take new ones, follow"}
        )
        actions["issues"].add_argument("--project", required=True, help="name or id")

    def run(self, options: dict[str, Any]) -> int:
        try:
            actor = acting_actor(options)
            project = find_project(options["project"], actor)
            require_actor(actor, project, Action.STATE_INTENT)
            if project.parsed_policy.forge is None or project.parsed_policy.forge.issues is None:
                raise SfError(
                    f"project {project.name}'s policy takes no issues: set forge.issues "
                    '({"label": "sf"}, docs/forge.md)'
                )
        except SfError as exc:
            self.err(f"error: {exc}")
            return EXIT_USAGE
        try:
            polled = issues_poll(project=project)
        except (ForgeError, SfError) as exc:
            self.err(f"error: {exc}")
            return EXIT_ERROR
        rows = ForgeIssue.objects.filter(project=project).order_by("number")
        if options["output_format"] == "json":
            issues = [
                {"number": r.number, "state": r.state, "session": r.session_id, "url": r.url,
                 "reason": r.reason}
                for r in rows
            ]  # fmt: skip
            counts = {"taken": polled.taken, "posted": polled.posted}
            self.out_json({**counts, "followups": polled.followups, "issues": issues})
            return EXIT_OK
        self.out(
            f"{project.name}: {polled.taken} issue(s) taken, {polled.posted} comment(s) "
            f"posted, {polled.followups} follow-up(s) sent"
        )
        for r in rows:
            self.out(f"  #{r.number} [{r.state}] session {r.session_id}: {r.title}")
        return EXIT_OK


SUBCOMMANDS: list[type[Subcommand]] = [ForgeCommand]
