"""Who may do what on a project: the one place SF decides access.

Every surface asks here — web views, websocket consumers, the CLI with an acting user
(``--as`` / ``SF_USER``), headless, the admin. A project's members hold one role each,
``viewer < operator < approver < admin``; a superuser counts as admin everywhere.
``ACTION_ROLES`` is the whole rule book: the least role each action needs.

- viewers read (board, session, unit, plans, approvals);
- operators create sessions, state intents, upload plans, retry or cancel tasks, sync
  the project's skills from its repository, manage schedules (within what their own
  role lets the schedule do: tasks_app.features.schedules.access) and steer — commands and axis
  changes — as long as the session stays at ``normal`` or below (lowering the profile, /pause and
  /stop are always steering);
- approvers accept plans, approve risk decisions and task reviews, request changes,
  skip tasks and raise a session to ``trusted``;
- admins raise to ``unrestricted`` and manage members.

Registering a repository creates a new project, so no project role can grant it: it is
a server-level permission, Django's ``agents_app.register_repository`` (superusers hold
it; a superuser grants it to a person or a group in the admin). The registrant may only
register a path under ``settings.SF_REPO_ROOTS`` (see ``repo_path_check``) and becomes
the new project's admin. A demo project (**Replay the demo**) counts for nothing
outside itself: ``role_of(user, None)`` ignores it.

``SF`` itself (``Actor.system``: the engine, and the CLI of the server's owner without
an acting user) is not a member and is never refused here.
"""

from __future__ import annotations

import functools
import logging
from enum import StrEnum
from pathlib import Path

from django.conf import settings
from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet

from agents_app import commands as cmd
from agents_app.axes import PermissionProfile
from agents_app.models import AgentSession, Project, ProjectMembership, Role, role_rank
from sf_core.actors import Actor
from sf_core.errors import NotAllowed

logger = logging.getLogger("sf.access")

AnyUser = User | AnonymousUser


class Action(StrEnum):
    """Everything a person may be refused, named the way the refusal says it."""

    VIEW = "view"
    CREATE_SESSION = "create a session"
    STATE_INTENT = "state an intent"
    STEER = "steer the session"
    RECOVER_TASK = "retry or cancel a task"
    SYNC_SKILLS = "sync the project's skills"
    MANAGE_SCHEDULES = "create, change or run a schedule"
    RAISE_TRUSTED = "raise the permission profile to trusted"
    ACCEPT_PLAN = "accept or reject a plan"
    APPROVE_DECISION = "approve or reject a risk decision"
    REVIEW_TASK = "review a task (approve and merge, request changes)"
    SKIP_TASK = "skip a task"
    RAISE_UNRESTRICTED = "raise the permission profile to unrestricted"
    MANAGE_MEMBERS = "manage members"
    REGISTER_REPOSITORY = "register a repository"
    # /doctor fix and /doctor heal act on SF's state across projects (docs/doctor.md).
    REPAIR = "run the doctor's repairs"


ACTION_ROLES: dict[Action, Role] = {
    Action.VIEW: Role.VIEWER,
    Action.CREATE_SESSION: Role.OPERATOR,
    Action.STATE_INTENT: Role.OPERATOR,
    Action.STEER: Role.OPERATOR,
    Action.RECOVER_TASK: Role.OPERATOR,
    Action.SYNC_SKILLS: Role.OPERATOR,
    Action.MANAGE_SCHEDULES: Role.OPERATOR,
    Action.RAISE_TRUSTED: Role.APPROVER,
    Action.ACCEPT_PLAN: Role.APPROVER,
    Action.APPROVE_DECISION: Role.APPROVER,
    Action.REVIEW_TASK: Role.APPROVER,
    Action.SKIP_TASK: Role.APPROVER,
    Action.RAISE_UNRESTRICTED: Role.ADMIN,
    Action.MANAGE_MEMBERS: Role.ADMIN,
    Action.REPAIR: Role.ADMIN,
}

# Actions no project role grants: Django permissions a superuser holds and grants.
SERVER_PERMISSIONS: dict[Action, str] = {
    Action.REGISTER_REPOSITORY: "agents_app.register_repository",
}
REGISTER_PERMISSION_LABEL = "register-repository permission (a superuser grants it)"


class AccessDenied(NotAllowed, PermissionDenied):
    """A person lacks the role an action needs. Both an ``SfError`` (the CLI's exit 2)
    and Django's ``PermissionDenied`` (the 403 page; a consumer's close)."""

    def __init__(
        self, *, user: AnyUser, project: Project | None, action: Action, hidden: bool = False
    ) -> None:
        self.action = action
        self.project = project
        self.role = role_of(user, project)
        if action in SERVER_PERMISSIONS:
            self.needed = REGISTER_PERMISSION_LABEL
            super().__init__(f"not allowed to {action.value}: it needs the {self.needed}")
            return
        self.needed = ACTION_ROLES[action]
        where = f"project {project.name!r}" if project is not None else "any project"
        if hidden:  # a project the person cannot see is not named to them
            where = "a project you are not a member of"
        held = f"you are {self.role}" if self.role else "you are not a member"
        super().__init__(
            f"not allowed to {action.value} on {where}: it needs the {self.needed} role ({held})"
        )


def role_of(user: AnyUser | None, project: Project | None) -> str | None:
    """The user's role on ``project`` (None: not a member). With no project, the
    highest role the user holds on any project but a demo (a demo's admin is nobody
    elsewhere). Superusers are admin everywhere; inactive and anonymous users have no
    role."""
    if user is None or not user.is_authenticated or not user.is_active:
        return None
    if user.is_superuser:
        return Role.ADMIN
    memberships = ProjectMembership.objects.filter(user_id=user.pk)
    if project is not None:
        return memberships.filter(project=project).values_list("role", flat=True).first()
    roles = memberships.exclude(project__demo=True).values_list("role", flat=True).distinct()
    return max(roles, key=role_rank, default=None)


def may(user: AnyUser | None, project: Project | None, action: Action) -> bool:
    return may_each(user, project, action)[0]


def may_each(user: AnyUser | None, project: Project | None, *actions: Action) -> list[bool]:
    """``may`` for each of ``actions``, the user's role read once (a page that checks
    access and then shows what the person may do asks twice)."""
    role = functools.cache(lambda: role_of(user, project))
    return [
        _holds(user, SERVER_PERMISSIONS[action])
        if action in SERVER_PERMISSIONS
        else role_rank(role()) >= role_rank(ACTION_ROLES[action])
        for action in actions
    ]


def _holds(user: AnyUser | None, permission: str) -> bool:
    """A server-level permission: Django's (superusers hold every one)."""
    if user is None or not user.is_authenticated or not user.is_active:
        return False
    return bool(user.has_perm(permission))


def require(user: AnyUser | None, project: Project | None, action: Action) -> None:
    """Raise ``AccessDenied`` (logged on ``sf.access``) unless the user may."""
    if may(user, project, action):
        return
    logger.warning(
        "refused: user=%s project=%s action=%r",
        getattr(user, "username", None) or "anonymous",
        project.pk if project is not None else "-",
        action.value,
    )
    raise AccessDenied(user=user or AnonymousUser(), project=project, action=action)


def require_actor(actor: Actor, project: Project | None, action: Action) -> None:
    """A person acting is checked; SF itself (a system actor) is not a member."""
    if actor.user is not None:
        require(actor.user, project, action)


def projects_visible(user: AnyUser) -> QuerySet[Project]:
    """The projects a user may view: their memberships (every project for a superuser)."""
    if not user.is_authenticated or not user.is_active:
        return Project.objects.none()
    if user.is_superuser:
        return Project.objects.all()
    return Project.objects.filter(memberships__user_id=user.pk)


def projects_administered(user: AnyUser) -> QuerySet[Project]:
    """The projects whose rows the user may change (admin role; every one for a superuser)."""
    if not user.is_authenticated or not user.is_active:
        return Project.objects.none()
    if user.is_superuser:
        return Project.objects.all()
    return Project.objects.filter(memberships__user_id=user.pk, memberships__role=Role.ADMIN)


def sessions_visible(user: AnyUser) -> QuerySet[AgentSession]:
    return AgentSession.objects.filter(project__in=projects_visible(user))


# --- what a change needs --------------------------------------------------------------

_PROFILE_ACTIONS = {
    PermissionProfile.TRUSTED.value: Action.RAISE_TRUSTED,
    PermissionProfile.UNRESTRICTED.value: Action.RAISE_UNRESTRICTED,
}


def profile_action(profile: str) -> Action:
    """What running a session at ``profile`` needs: steering up to ``normal``."""
    return _PROFILE_ACTIONS.get(profile, Action.STEER)


def command_action(session: AgentSession, command: cmd.Command) -> Action:
    """What applying ``command`` to ``session`` needs.

    Queries read. /pause and /stop only ever make a session safer. Any other change
    leaves the session running (or ready to run) at some profile — the one it asks
    for, or the session's own — and steering a session at that profile needs the role
    that raising it there would: an operator cannot drive a trusted session."""
    if isinstance(command, cmd.Query) or (
        isinstance(command, cmd.SkillCommand) and not command.name
    ):
        return Action.VIEW
    if isinstance(command, cmd.Pause | cmd.Stop):
        return Action.STEER
    if isinstance(command, cmd.Doctor):
        return Action.VIEW if command.action == cmd.DoctorAction.INSPECT else Action.REPAIR
    profile = session.permission_profile
    if isinstance(command, cmd.SetAxes | cmd.Steer):
        profile = command.changes.get("permission_profile", profile)
    return profile_action(profile)


def require_command(actor: Actor, session: AgentSession, command: cmd.Command) -> None:
    require_actor(actor, session.project, command_action(session, command))


# --- registering repositories ---------------------------------------------------------


def repo_roots() -> list[Path]:
    """``settings.SF_REPO_ROOTS``, resolved (symlinks followed)."""
    return [Path(root).resolve() for root in settings.SF_REPO_ROOTS]


def sf_checkout() -> Path:
    return Path(settings.BASE_DIR).resolve()


def repo_path_check(repo_path: str, *, by_person: bool) -> Path:
    """The repository path, resolved with symlinks, if it may be registered.

    SF's own checkout (or anything inside it but its data directory, where SF keeps
    its demo repositories) is always refused: agents would edit the code that judges
    them. A person may only register under one of ``SF_REPO_ROOTS``; the server's
    owner at the shell (no acting user) is not held to them."""
    resolved = Path(repo_path).expanduser().resolve()
    data_dir = Path(settings.SF_DATA_DIR).resolve()
    checkout = sf_checkout()
    if resolved.is_relative_to(checkout) and not resolved.is_relative_to(data_dir):
        raise NotAllowed(f"{resolved} is SF's own checkout; SF does not work on itself")
    if by_person and not under_repo_roots(resolved):
        roots = ":".join(str(root) for root in repo_roots()) or "(none)"
        logger.warning("refused: repository %s outside SF_REPO_ROOTS %s", resolved, roots)
        raise NotAllowed(
            f"{resolved} is outside the allowed repository roots {roots}: put the repository "
            "under one of them, or have the server's admin add its folder to SF_REPO_ROOTS"
        )
    return resolved


def under_repo_roots(path: Path) -> bool:
    """Whether a person may register ``path`` (resolved): the one rule for the web, the
    API and the CLI with ``--as``; the server's own shell may register anywhere but
    SF's checkout, and is told when a path is outside the roots."""
    return any(path.is_relative_to(root) for root in repo_roots())


# What recovering a task from the board (``sf tasks retry|cancel|skip``) needs: skipping
# lets its dependants run as if it were done, without a review — an approver's call.
RECOVERY_ACTIONS: dict[str, Action] = {
    "retry": Action.RECOVER_TASK,
    "resume": Action.RECOVER_TASK,
    "stop": Action.RECOVER_TASK,
    "cancel": Action.RECOVER_TASK,
    "skip": Action.SKIP_TASK,
}
