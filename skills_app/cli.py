"""``manage.py sf skills``: sync and list the skills of a project (and the user folder)."""

from __future__ import annotations

import argparse
from typing import Any

from agents_app.access import Action, require_actor
from agents_app.models import Project
from sf_core.cli import (
    EXIT_ERROR,
    EXIT_OK,
    EXIT_USAGE,
    Subcommand,
    acting_actor,
    add_acting_user,
    add_output_format,
)
from sf_core.errors import SfError
from skills_app.loader import model_may_see, skills_available
from skills_app.sync import project_skills_sync, user_skills_sync


def find_project(ref: str) -> Project:
    """A project by name or id, or an error naming the known ones."""
    project = Project.objects.filter(name=ref).first()
    if project is None and ref.isdigit():
        project = Project.objects.filter(pk=int(ref)).first()
    if project is None:
        known = ", ".join(Project.objects.values_list("name", flat=True)[:20]) or "none"
        raise SfError(f"no project {ref!r}; projects: {known}")
    return project


class SkillsCommand(Subcommand):
    name = "skills"
    help = "Sync and list skills (.agents/skills in a project, and the user folder)."

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True)
        sync = actions.add_parser("sync", help="read the skill folders into the database now")
        listing = actions.add_parser("list", help="the skills a unit of the project may use")
        for action in (sync, listing):
            action.add_argument("--project", required=True, help="project name or id")
            add_output_format(action)
            add_acting_user(action)

    def run(self, options: dict[str, Any]) -> int:
        try:
            actor = acting_actor(options)
            project = find_project(options["project"])
            require_actor(actor, project, Action.VIEW)
            if options["action"] == "sync":  # it writes rows, as the web's Sync now does
                require_actor(actor, project, Action.SYNC_SKILLS)
        except SfError as exc:
            self.err(f"error: {exc}")
            return EXIT_USAGE
        if options["action"] == "sync":
            return self._sync(project, options)
        return self._list(project, options)

    def _sync(self, project: Project, options: dict[str, Any]) -> int:
        reports = [project_skills_sync(project), user_skills_sync()]
        if options["output_format"] == "json":
            self.out_json([report.as_dict() for report in reports])
        else:
            for report in reports:
                self.out(
                    f"{report.root}: {len(report.added)} added, {len(report.changed)} changed, "
                    f"{report.unchanged} unchanged, {len(report.removed)} removed"
                )
                for name, problem in sorted(report.invalid.items()):
                    self.out(f"  invalid {name}: {problem}")
        invalid = any(report.invalid for report in reports)
        return EXIT_ERROR if invalid else EXIT_OK

    def _list(self, project: Project, options: dict[str, Any]) -> int:
        rows = [
            {
                "name": skill.name,
                "scope": skill.scope,
                "valid": skill.valid,
                "problem": skill.problem,
                "description": skill.description,
                "user_invocable": skill.user_invocable,
                "offered_to_model": model_may_see(skill),
                "side_effects": skill.side_effects,
                "permission_profile": skill.permission_profile,
            }
            for skill in skills_available(project)
        ]
        if options["output_format"] == "json":
            self.out_json(rows)
            return EXIT_OK
        for row in rows:
            state = "valid" if row["valid"] else f"INVALID: {row['problem']}"
            self.out(f"{row['name']:<32} {row['scope']:<8} {state}")
        return EXIT_OK


SUBCOMMANDS: list[type[Subcommand]] = [SkillsCommand]
