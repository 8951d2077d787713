"""``manage.py sf project|session|command``: the agents app's command-line surface."""

from __future__ import annotations

import argparse
from typing import Any

from django.contrib.auth import get_user_model

from agents_app.axes import AXIS_NAMES, NEW_SESSION_AXES
from agents_app.models import AgentSession, ModeTransition, Project
from sf_core.actors import Actor
from sf_core.cli import EXIT_OK, EXIT_USAGE, Subcommand, add_output_format
from sf_core.errors import SfError


def transition_json(transition: ModeTransition | None) -> dict[str, Any] | None:
    if transition is None:
        return None
    return {
        "id": transition.pk,
        "from": transition.from_axes.as_dict(),
        "to": transition.to_axes.as_dict(),
        "paused": transition.to_paused,
        "reason": transition.reason,
        "scope": transition.scope,
        "status": transition.status,
        "actor": transition.actor_display,
        "requested_at": transition.requested_at.isoformat(),
        "applied_at": transition.applied_at.isoformat() if transition.applied_at else None,
    }


def session_json(session: AgentSession) -> dict[str, Any]:
    return {
        "id": session.pk,
        "project": session.project_id,
        "title": session.title,
        "axes": session.axes.as_dict(),
        "paused": session.paused,
        "status": session.status,
    }


def cli_actor(username: str | None) -> Actor:
    if not username:
        return Actor.system("cli")
    try:
        return Actor.of(get_user_model().objects.get(username=username))
    except get_user_model().DoesNotExist:
        raise SfError(f"no user named {username!r}") from None


def find_session(session_id: int) -> AgentSession:
    try:
        return AgentSession.objects.select_related("project").get(pk=session_id)
    except AgentSession.DoesNotExist:
        raise SfError(f"no session with id {session_id}") from None


class CommandCommand(Subcommand):
    name = "command"
    help = "Apply a slash command to a session and print the resulting axes."

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--session", type=int, required=True, help="session id")
        parser.add_argument("--user", help="attribute the change to this user (default: cli)")
        parser.add_argument("text", help='the command, e.g. "/mode build --autonomous"')
        add_output_format(parser)

    def run(self, options: dict[str, Any]) -> int:
        from agents_app.services import command_run

        as_json = options["output_format"] == "json"
        try:
            session = find_session(options["session"])
            outcome = command_run(
                session=session, text=options["text"], actor=cli_actor(options["user"])
            )
        except SfError as exc:
            return self.fail(str(exc), as_json)
        if as_json:
            self.out_json(
                {
                    "ok": True,
                    "message": outcome.message,
                    "session": session_json(outcome.session),
                    "pending": outcome.pending,
                    "transition": transition_json(outcome.transition),
                    "data": outcome.data,
                }
            )
        else:
            self.out(outcome.message)
            axes = outcome.session.axes.as_dict()
            self.out(" ".join(f"{axis}={axes[axis]}" for axis in AXIS_NAMES))
        return EXIT_OK

    def fail(self, message: str, as_json: bool) -> int:
        if as_json:
            self.out_json({"ok": False, "error": message})
        else:
            self.err(f"error: {message}")
        return EXIT_USAGE


class ProjectCommand(Subcommand):
    name = "project"
    help = "Create or list projects."

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True)
        create = actions.add_parser("create", help="register a git repository")
        create.add_argument("name")
        create.add_argument("repo_path")
        create.add_argument("--base-branch", default="main")
        create.add_argument("--policy", help="policy JSON (allow/deny, repair_policy, budgets)")
        listing = actions.add_parser("list", help="list projects")
        for action in (create, listing):
            add_output_format(action)

    def run(self, options: dict[str, Any]) -> int:
        from agents_app.services import project_create

        if options["action"] == "list":
            rows = [
                {"id": p.pk, "name": p.name, "repo_path": p.repo_path, "base_branch": p.base_branch}
                for p in Project.objects.all()
            ]
            self._print(rows, options)
            return EXIT_OK
        try:
            project = project_create(
                name=options["name"],
                repo_path=options["repo_path"],
                base_branch=options["base_branch"],
                policy=options["policy"],
            )
        except SfError as exc:
            self.err(f"error: {exc}")
            return EXIT_USAGE
        self._print([{"id": project.pk, "name": project.name}], options)
        return EXIT_OK

    def _print(self, rows: list[dict[str, Any]], options: dict[str, Any]) -> None:
        if options["output_format"] == "json":
            self.out_json(rows)
            return
        for row in rows:
            self.out("  ".join(str(value) for value in row.values()))


class SessionCommand(Subcommand):
    name = "session"
    help = "Create or show agent sessions."

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True)
        create = actions.add_parser("create", help="start a session on a project")
        create.add_argument("--project", type=int, required=True)
        create.add_argument("--title", default="")
        # Unset axes take NEW_SESSION_AXES (session_create), as the web form does.
        for axis in ("work_mode", "run_control", "permission_profile", "model_mode"):
            create.add_argument(
                f"--{axis.replace('_', '-')}", help=f"default: {NEW_SESSION_AXES[axis]}"
            )
        create.add_argument("--surface", default="headless")
        show = actions.add_parser("show", help="print a session")
        show.add_argument("session_id", type=int)
        for action in (create, show):
            add_output_format(action)

    def run(self, options: dict[str, Any]) -> int:
        from agents_app.services import session_create

        try:
            if options["action"] == "show":
                session = find_session(options["session_id"])
            else:
                project = Project.objects.filter(pk=options["project"]).first()
                if project is None:
                    raise SfError(f"no project with id {options['project']}")
                axes = {axis: options[axis] for axis in AXIS_NAMES if options.get(axis)}
                session = session_create(project=project, title=options["title"], axes=axes)
        except SfError as exc:
            self.err(f"error: {exc}")
            return EXIT_USAGE
        if options["output_format"] == "json":
            self.out_json(session_json(session))
        else:
            from agents_app.badge import badge_for

            self.out(f"session {session.pk}: {badge_for(session).full_text} ({session.status})")
        return EXIT_OK


SUBCOMMANDS: list[type[Subcommand]] = [ProjectCommand, SessionCommand, CommandCommand]
