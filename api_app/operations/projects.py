"""Projects and sessions for a token: register, list, show, open a session, command it,
state an intent, upload a plan, the ``headless query`` snapshot."""

from __future__ import annotations

import json
from typing import Any

from agents_app.access import Action, profile_action, require, role_of
from agents_app.models import AgentSession, Project
from agents_app.services import command_run, project_create, session_create
from api_app.auth import visible_or_404
from api_app.models import ApiToken
from api_app.schemas import (
    CommandOut,
    IntentIn,
    PlanOut,
    PlanRequestOut,
    PlanUploadIn,
    ProjectIn,
    ProjectOut,
    SessionIn,
    SessionOut,
    SkillOut,
    plan_out,
    plan_request_out,
    project_out,
    session_out,
)
from api_app.tokens import token_projects
from sf_core.actors import Actor
from skills_app.selectors import project_skills
from tasks_app.features.headless.query import snapshot_of
from tasks_app.intake import plan_upload, planning_start, project_intent_start


def jsonable(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with what JSON cannot carry (dates, decimals) as text."""
    return dict(json.loads(json.dumps(data, default=str)))


def projects_list(*, token: ApiToken) -> list[ProjectOut]:
    """The projects the token sees, by name, each with the person's role."""
    projects = token_projects(token).order_by("name")
    return [project_out(project, role_of(token.user, project)) for project in projects]


def project_register(*, token: ApiToken, data: ProjectIn) -> ProjectOut:
    """Register a repository as a new project; its registrant becomes its admin."""
    user = token.user
    require(user, None, Action.REGISTER_REPOSITORY)
    project = project_create(
        name=data.name,
        repo_path=data.repo_path,
        base_branch=data.base_branch,
        policy=data.policy,
        created_by=user,
    )
    return project_out(project, role_of(user, project))


def project_find(*, token: ApiToken, project_id: int) -> Project:
    return visible_or_404(token, Project.objects.all(), project_id, "")


def project_show(*, token: ApiToken, project_id: int) -> ProjectOut:
    project = project_find(token=token, project_id=project_id)
    return project_out(project, role_of(token.user, project))


def project_skills_list(*, token: ApiToken, project_id: int) -> list[SkillOut]:
    project = project_find(token=token, project_id=project_id)
    return [SkillOut.from_orm(skill) for skill in project_skills(project)]


def session_find(*, token: ApiToken, session_id: int) -> AgentSession:
    queryset = AgentSession.objects.select_related("project")
    return visible_or_404(token, queryset, session_id, "project")


def session_open(*, token: ApiToken, data: SessionIn) -> SessionOut:
    """A new session on a visible project; one created at trusted or unrestricted is
    a raise to that profile and needs the role raising needs."""
    user = token.user
    project = project_find(token=token, project_id=data.project_id)
    require(user, project, Action.CREATE_SESSION)
    axes = data.axes.chosen()
    profile = axes.get("permission_profile")
    if profile:  # a session created at trusted or unrestricted is a raise to it
        require(user, project, profile_action(profile))
    session = session_create(project=project, created_by=user, title=data.title, axes=axes)
    return session_out(session)


def session_show(*, token: ApiToken, session_id: int) -> SessionOut:
    return session_out(session_find(token=token, session_id=session_id))


def session_command(*, token: ApiToken, session_id: int, text: str) -> CommandOut:
    """One command of the grammar the command bar, CLI and headless share; the role it
    needs is the command service's to judge."""
    session = session_find(token=token, session_id=session_id)
    outcome = command_run(session=session, text=text, actor=Actor.of(token.user))
    transition = outcome.transition
    return CommandOut(
        session=session_out(outcome.session),
        message=outcome.message,
        transition_id=transition.pk if transition is not None else None,
        pending=outcome.pending,
        data=jsonable(outcome.data),
    )


def session_intent(*, token: ApiToken, session_id: int, data: IntentIn) -> PlanRequestOut:
    """Plan an intent in a session, on a worker: the plan request, *planning*."""
    session = session_find(token=token, session_id=session_id)
    require(token.user, session.project, Action.STATE_INTENT)
    plan_request = planning_start(
        session=session, intent=data.intent, actor=Actor.of(token.user), replay=data.replay
    )
    return plan_request_out(plan_request)


def project_intent(*, token: ApiToken, project_id: int, data: IntentIn) -> PlanRequestOut:
    """The project page's intent box: a new session that starts planning the intent."""
    project = project_find(token=token, project_id=project_id)
    require(token.user, project, Action.STATE_INTENT)
    plan_request = project_intent_start(
        project=project, intent=data.intent, actor=Actor.of(token.user), replay=data.replay
    )
    return plan_request_out(plan_request)


def session_plan_upload(*, token: ApiToken, session_id: int, data: PlanUploadIn) -> PlanOut:
    """A plan file's text (YAML, JSON or Markdown), checked as ``sf plan import`` does."""
    session = session_find(token=token, session_id=session_id)
    require(token.user, session.project, Action.STATE_INTENT)
    return plan_out(plan_upload(session=session, name=data.name, content=data.content.encode()))


def session_snapshot(*, token: ApiToken, session_id: int) -> dict[str, Any]:
    """What ``sf headless query`` prints for the session."""
    return jsonable(snapshot_of(session_find(token=token, session_id=session_id)))
