"""A headless run with an acting user (``--as`` / ``SF_USER``): every act it will do is
checked against the person's project role before anything is written.

Without an acting user a headless run acts as SF itself, as the CLI does (the server
owner's shell, or CI that holds the database credentials).
"""

from __future__ import annotations

from django.contrib.auth.models import User

from agents_app.access import Action, profile_action, repo_path_check, require
from agents_app.axes import NEW_SESSION_AXES
from agents_app.models import AgentSession, Project
from tasks_app.features.headless.options import HeadlessOptions


def headless_authorize(options: HeadlessOptions, user: User) -> None:
    """Raise ``AccessDenied`` naming the first act of the run ``user`` may not do."""
    project, profile = _target(options)
    if project is None:
        # A new repository: the run registers it, and its registrant becomes its admin,
        # who may do everything else the run does.
        assert options.project is not None  # the command checked
        require(user, None, Action.REGISTER_REPOSITORY)
        repo_path_check(str(options.project), by_person=True)
        return
    for action in _actions(options, profile):
        require(user, project, action)


def _target(options: HeadlessOptions) -> tuple[Project | None, str]:
    """The project the run works on (None: not registered yet) and the session's profile."""
    if options.session_id is not None:
        session = AgentSession.objects.select_related("project").get(pk=options.session_id)
        return session.project, session.permission_profile
    assert options.project is not None
    project = Project.objects.filter(repo_path=str(options.project.resolve())).first()
    return project, NEW_SESSION_AXES["permission_profile"]


def _actions(options: HeadlessOptions, profile: str) -> list[Action]:
    actions = [Action.VIEW]
    if options.session_id is None:
        actions.append(Action.CREATE_SESSION)
    if options.intent or options.plan is not None:
        actions.append(Action.STATE_INTENT)
    if options.autonomous:
        actions.append(Action.ACCEPT_PLAN)
    if options.autonomous or options.session_id is not None or options.step:
        actions.append(profile_action(options.permission_profile or _replayed(options) or profile))
    if options.answers is not None and options.answers.approvals:
        actions.append(Action.APPROVE_DECISION)
    return actions


def _replayed(options: HeadlessOptions) -> str | None:
    if options.replay is None:
        return None
    profile = options.replay.header.get("permission_profile")
    return str(profile) if profile else None
