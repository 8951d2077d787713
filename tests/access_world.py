"""A project with one of everything an access rule guards, and ``bob`` acting on it.

The permission matrix (``test_access_matrix``, ``test_access_websockets``) gives
``bob`` each role in turn and tries each action; ``World`` holds the objects, and
``ROLES_NEEDED`` what the product promises each action needs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from django.contrib.auth.models import User

from agents_app.gate.session import SessionGate, input_hash
from agents_app.models import AgentSession, Project, RiskDecision, role_rank
from agents_app.tests.runtime_helpers import ScriptedModel
from conftest import grant
from tasks_app.engine.replaying import demo_repo_create
from tasks_app.models import Plan, PlanSource
from tasks_app.schemas import plan_spec_parse
from tasks_app.services import plan_create
from tasks_app.tests.test_engine import run_next, start, task_spec, writes

ROLES: list[str | None] = [None, "viewer", "operator", "approver", "admin"]

# What the product promises (the brief's rules), written out independently of
# ``access.ACTION_ROLES`` so that a change there that breaks a promise fails here.
ROLES_NEEDED: dict[str, str] = {
    "view": "viewer",
    "create_session": "operator",
    "state_intent": "operator",
    "steer_normal": "operator",
    "retry_task": "operator",
    "raise_trusted": "approver",
    "accept_plan": "approver",
    "approve_decision": "approver",
    "approve_merge": "approver",
    "request_changes": "approver",
    "raise_unrestricted": "admin",
    "manage_members": "admin",
}
# Registering a repository is no project role's: it is a server-level permission
# (tests/test_authz_registration.py).

PUSH = {"command": "git push origin main", "cwd": None, "timeout_s": 120}
PLAN_YAML = """summary: a plan
tasks:
  - key: one
    title: One
    acceptance_criteria: [it works]
    verify: ["true"]
"""


def allowed(role: str | None, action: str) -> bool:
    return role_rank(role) >= role_rank(ROLES_NEEDED[action])


@dataclass
class World:
    bob: User
    project: Project
    session: AgentSession  # chat | manual | normal | smart, no plan
    repo: Path
    tmp: Path


def world_make(tmp: Path, role: str | None) -> World:
    repo = demo_repo_create(tmp / "repo")
    session, _ = start(repo, task_spec(max_retries=0), profile="normal")
    # A fresh session on the same project for the steering and planning actions.
    plain = AgentSession.objects.create(project=session.project, title="plain")
    bob = User.objects.create(username="bob")
    grant(bob, session.project, role)
    return World(bob=bob, project=session.project, session=plain, repo=repo, tmp=tmp)


def proposed_plan(world: World) -> Plan:
    spec = plan_spec_parse({"summary": "s", "tasks": [task_spec("later")]})
    return plan_create(session=world.session, spec=spec, source=PlanSource.API)


def pending_decision(world: World) -> RiskDecision:
    AgentSession.objects.filter(pk=world.session.pk).update(
        run_control="autonomous", work_mode="build"
    )
    gate = SessionGate(session_id=world.session.pk, worktree=world.repo)
    verdict = gate.check("run_command", PUSH, input_hash("run_command", PUSH))
    return RiskDecision.objects.get(pk=verdict.decision_id)


def task_in(world: World, status: str) -> tuple[AgentSession, Plan]:
    """A task of its own session that ran once: ``review`` (it wrote hello) or
    ``failed`` (it wrote something else, no retries)."""
    session = AgentSession.objects.filter(project=world.project, plans__isnull=False).first()
    assert session is not None
    plan = Plan.objects.get(session=session)
    content = "hello\n" if status == "review" else "goodbye\n"
    assert run_next(session, ScriptedModel(*writes(content))).task_status == status
    return session, plan
