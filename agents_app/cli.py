"""``manage.py sf project|session|command``: the agents app's command-line surface."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from agents_app.access import (
    Action,
    profile_action,
    projects_visible,
    repo_roots,
    require_actor,
    under_repo_roots,
)
from agents_app.axes import AXIS_NAMES, NEW_SESSION_AXES
from agents_app.models import AgentSession, ModeTransition, Project, ProjectMembership, Role
from sf_core.actors import Actor
from sf_core.cli import (
    EXIT_OK,
    EXIT_USAGE,
    Subcommand,
    acting_actor,
    add_acting_user,
    add_output_format,
)
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


def find_project(ref: str, actor: Actor | None = None) -> Project:
    """A project by name or id, or an error naming the known ones: with a person
    acting, only those they may view (the names of the others are not theirs to see)."""
    project = Project.objects.filter(name=ref).first()
    if project is None and ref.isdigit():
        project = Project.objects.filter(pk=int(ref)).first()
    if project is None:
        person = actor.user if actor is not None else None
        known_to = projects_visible(person) if person is not None else Project.objects.all()
        known = ", ".join(known_to.values_list("name", flat=True)[:20]) or "none"
        raise SfError(f"no project {ref!r}; projects{' you may view' * bool(person)}: {known}")
    return project


def find_session(session_id: int, actor: Actor | None = None) -> AgentSession:
    """The session; with a person acting, only if they may view it."""
    try:
        session = AgentSession.objects.select_related("project").get(pk=session_id)
    except AgentSession.DoesNotExist:
        raise SfError(f"no session with id {session_id}") from None
    if actor is not None:
        require_actor(actor, session.project, Action.VIEW)
    return session


class CommandCommand(Subcommand):
    name = "command"
    help = "Apply a slash command to a session and print the resulting axes."

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--session", type=int, required=True, help="session id")
        add_acting_user(parser)
        parser.add_argument("text", help='the command, e.g. "/mode build --autonomous"')
        add_output_format(parser)

    def run(self, options: dict[str, Any]) -> int:
        from agents_app.services import command_run

        as_json = options["output_format"] == "json"
        try:
            actor = acting_actor(options)
            session = find_session(options["session"], actor)
            outcome = command_run(session=session, text=options["text"], actor=actor)
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
        actions = self.add_actions(
            parser, {"create": "register a git repository", "list": "list projects"}
        )
        create = actions["create"]
        create.add_argument("name")
        create.add_argument("repo_path")
        create.add_argument("--base-branch", default="main")
        create.add_argument("--policy", help="policy JSON (allow/deny, repair_policy, budgets)")

    def run(self, options: dict[str, Any]) -> int:
        from agents_app.services import project_create

        try:
            actor = acting_actor(options)
            if options["action"] == "list":
                projects = projects_visible(actor.user) if actor.user else Project.objects.all()
                rows = [
                    {
                        "id": p.pk,
                        "name": p.name,
                        "repo_path": p.repo_path,
                        "base_branch": p.base_branch,
                    }
                    for p in projects
                ]
                self._print(rows, options)
                return EXIT_OK
            require_actor(actor, None, Action.REGISTER_REPOSITORY)
            project = project_create(
                name=options["name"],
                repo_path=options["repo_path"],
                base_branch=options["base_branch"],
                policy=options["policy"],
                created_by=actor.user,
            )
        except SfError as exc:
            self.err(f"error: {exc}")
            return EXIT_USAGE
        if actor.user is None and not under_repo_roots(Path(project.repo_path)):
            roots = ":".join(str(root) for root in repo_roots()) or "(none)"
            self.err(
                f"note: {project.repo_path} is outside SF_REPO_ROOTS ({roots}): registered "
                "because this is the server's shell; a person (the web, the API, --as) "
                "could not register it"
            )
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
        actions = self.add_actions(
            parser, {"create": "start a session on a project", "show": "print a session"}
        )
        create = actions["create"]
        create.add_argument("--project", type=int, required=True)
        create.add_argument("--title", default="")
        # Unset axes take NEW_SESSION_AXES (session_create), as the web form does.
        for axis in ("work_mode", "run_control", "permission_profile", "model_mode"):
            create.add_argument(
                f"--{axis.replace('_', '-')}", help=f"default: {NEW_SESSION_AXES[axis]}"
            )
        create.add_argument("--surface", default="headless")
        actions["show"].add_argument("session_id", type=int)

    def run(self, options: dict[str, Any]) -> int:
        try:
            actor = acting_actor(options)
            if options["action"] == "show":
                session = find_session(options["session_id"], actor)
            else:
                session = self._create(options, actor)
        except SfError as exc:
            self.err(f"error: {exc}")
            return EXIT_USAGE
        if options["output_format"] == "json":
            self.out_json(session_json(session))
        else:
            from agents_app.badge import badge_for

            self.out(f"session {session.pk}: {badge_for(session).full_text} ({session.status})")
        return EXIT_OK

    def _create(self, options: dict[str, Any], actor: Actor) -> AgentSession:
        from agents_app.services import session_create

        project = Project.objects.filter(pk=options["project"]).first()
        if project is None:
            raise SfError(f"no project with id {options['project']}")
        axes = {axis: options[axis] for axis in AXIS_NAMES if options.get(axis)}
        require_actor(actor, project, Action.CREATE_SESSION)
        profile = axes.get("permission_profile", NEW_SESSION_AXES["permission_profile"])
        require_actor(actor, project, profile_action(profile))
        return session_create(
            project=project, created_by=actor.user, title=options["title"], axes=axes
        )


MEMBER_ACTIONS = ("list", "add", "role", "remove")


class MembersCommand(Subcommand):
    name = "members"
    help = "List a project's members, or add one, change a role, remove one (admins)."

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("project", type=int, help="project id")
        parser.add_argument("action", nargs="?", default="list", choices=MEMBER_ACTIONS)
        parser.add_argument("username", nargs="?")
        parser.add_argument("role", nargs="?", choices=Role.values)
        add_acting_user(parser)
        add_output_format(parser)

    def run(self, options: dict[str, Any]) -> int:
        from agents_app.services import member_add, member_remove, member_set_role

        try:
            actor = acting_actor(options)
            project = Project.objects.filter(pk=options["project"]).first()
            if project is None:
                raise SfError(f"no project with id {options['project']}")
            action, username, role = options["action"], options["username"], options["role"]
            if action == "list":
                require_actor(actor, project, Action.VIEW)
            elif not username or (action != "remove" and not role):
                raise SfError(f"members {action} needs USERNAME" + " ROLE" * (action != "remove"))
            elif action == "add":
                member_add(project=project, username=username, role=role, actor=actor)
            elif action == "role":
                member_set_role(project=project, username=username, role=role, actor=actor)
            else:
                member_remove(project=project, username=username, actor=actor)
        except SfError as exc:
            self.err(f"error: {exc}")
            return EXIT_USAGE
        rows = ProjectMembership.objects.filter(project=project).select_related("user")
        members = [{"user": m.user.username, "role": m.role} for m in rows]
        if options["output_format"] == "json":
            self.out_json(members)
        else:
            for member in members:
                self.out(f"{member['user']}  {member['role']}")
        return EXIT_OK


SUBCOMMANDS: list[type[Subcommand]] = [
    ProjectCommand,
    SessionCommand,
    CommandCommand,
    MembersCommand,
]
