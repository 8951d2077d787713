"""The permission matrix: each role, each action, through the web and the CLI (``--as``).

An allowed action does what it says; a refused one is a 403 page (web) or exit 2
with one line on stderr (CLI) naming the role it needs, and changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from agents_app.access import ACTION_ROLES, Action
from agents_app.models import AgentSession, ProjectMembership, RiskDecision
from tasks_app.models import Plan, Task
from tests.access_world import (
    PLAN_YAML,
    ROLES,
    ROLES_NEEDED,
    World,
    allowed,
    pending_decision,
    proposed_plan,
    task_in,
    world_make,
)
from tests.cli import run_sf

pytestmark = pytest.mark.django_db


@pytest.fixture
def roots(settings: Any, tmp_path: Path) -> None:
    settings.SF_REPO_ROOTS = [str(tmp_path.resolve())]


def test_the_rule_book_keeps_the_promises() -> None:
    for action, name in (
        (Action.VIEW, "view"),
        (Action.CREATE_SESSION, "create_session"),
        (Action.STATE_INTENT, "state_intent"),
        (Action.STEER, "steer_normal"),
        (Action.RECOVER_TASK, "retry_task"),
        (Action.RAISE_TRUSTED, "raise_trusted"),
        (Action.ACCEPT_PLAN, "accept_plan"),
        (Action.APPROVE_DECISION, "approve_decision"),
        (Action.REVIEW_TASK, "approve_merge"),
        (Action.RAISE_UNRESTRICTED, "raise_unrestricted"),
        (Action.MANAGE_MEMBERS, "manage_members"),
    ):
        assert ACTION_ROLES[action] == ROLES_NEEDED[name], action


# --- what each action works on, and what it changes -------------------------------------


def setup(world: World, action: str) -> dict[str, Any]:
    """Build what the action needs; return its objects by name."""
    match action:
        case "accept_plan":
            return {"plan": proposed_plan(world)}
        case "approve_decision":
            return {"decision": pending_decision(world)}
        case "approve_merge" | "request_changes":
            session, plan = task_in(world, "review")
            return {"task": plan.tasks.get(), "task_session": session}
        case "retry_task":
            session, plan = task_in(world, "failed")
            return {"task": plan.tasks.get(), "task_session": session}
        case "manage_members":
            User.objects.create(username="carol")
    return {}


def state(world: World, action: str, ctx: dict[str, Any]) -> object:
    """What the action changes when it is allowed (compared before and after)."""
    session = world.session
    if action in ("view", "steer_normal", "raise_trusted", "raise_unrestricted"):
        return AgentSession.objects.get(pk=session.pk).axes.as_dict()
    if action == "create_session":
        return AgentSession.objects.count()
    if action == "state_intent":
        return Plan.objects.filter(session=session).count()
    if action == "accept_plan":
        return Plan.objects.get(pk=ctx["plan"].pk).status
    if action == "approve_decision":
        return RiskDecision.objects.get(pk=ctx["decision"].pk).review_status
    if "task" in ctx:
        return Task.objects.get(pk=ctx["task"].pk).status
    assert action == "manage_members"
    return ProjectMembership.objects.count()


def check(world: World, action: str, role: str | None, do: Callable[[dict[str, Any]], Any]) -> Any:
    """Run ``do`` on the action's objects; assert it changed state iff it was allowed."""
    ctx = setup(world, action)
    before = state(world, action, ctx)
    result = do(ctx)
    after = state(world, action, ctx)
    if action != "view":
        assert (after != before) == allowed(role, action), (before, after)
    return result


# --- web ------------------------------------------------------------------------------


def web(world: World, client: Client, action: str, ctx: dict[str, Any]) -> Any:
    session = world.session

    def post(name: str, args: list[Any], data: dict[str, Any]) -> Any:
        return client.post(reverse(name, args=args), data)

    steer = {
        "steer_normal": ("session-command", {"text": "/mode build"}),
        "raise_trusted": ("session-axis", {"axis": "permission_profile", "value": "trusted"}),
        "raise_unrestricted": (
            "session-command",
            {"text": "/permission-profile unrestricted --confirm"},
        ),
    }
    if action in steer:
        name, data = steer[action]
        return post(name, [session.pk], data)
    match action:
        case "view":
            return client.get(reverse("session-detail", args=[session.pk]))
        case "create_session":
            form = {"title": "t", "work_mode": "plan", "run_control": "manual"}
            form |= {"permission_profile": "normal", "model_mode": "deep"}
            return post("project-detail", [world.project.pk], form)
        case "state_intent":
            upload = SimpleUploadedFile("plan.yaml", PLAN_YAML.encode())
            return post("plan-upload", [session.pk], {"plan_file": upload})
        case "accept_plan":
            return post("plan-accept", [ctx["plan"].pk], {"action": "accept"})
        case "approve_decision":
            return post("approval-review", [ctx["decision"].pk], {"action": "approve"})
        case "approve_merge" | "request_changes":
            verb = "approve" if action == "approve_merge" else "changes"
            return post("task-review", [ctx["task"].pk], {"action": verb, "reason": "redo it"})
        case "retry_task":
            return post("task-recover", [ctx["task"].pk, "retry"], {})
        case "manage_members":
            data = {"action": "add", "username": "carol", "role": "viewer"}
            return post("project-members", [world.project.pk], data)
    raise AssertionError(action)


@pytest.mark.usefixtures("roots")
@pytest.mark.parametrize("action", list(ROLES_NEEDED))
@pytest.mark.parametrize("role", ROLES)
def test_web(tmp_path: Path, client: Client, role: str | None, action: str) -> None:
    world = world_make(tmp_path, role)
    client.force_login(world.bob)
    response = check(world, action, role, lambda ctx: web(world, client, action, ctx))
    page = response.content.decode()
    if allowed(role, action):
        assert response.status_code in (200, 302), page[:500]
    else:
        assert response.status_code == 403, page[:500]
        # A non-member is refused at the door (viewing); a member at the action.
        needed = {ROLES_NEEDED[action]} | ({"viewer"} if role is None else set())
        assert any(f"needs the {name} role" in page for name in needed), page[:500]
        assert "data-refusal" in page  # the app's own 403 page, naming the refusal


# --- CLI ------------------------------------------------------------------------------

CLI_ACTIONS = [
    "view",
    "create_session",
    "state_intent",
    "steer_normal",
    "raise_trusted",
    "raise_unrestricted",
    "accept_plan",
    "retry_task",
    "manage_members",
]  # approving decisions and reviewing tasks have no CLI


def cli(world: World, action: str, ctx: dict[str, Any]) -> tuple[int, str, str]:
    session = str(world.session.pk)
    command = {
        "steer_normal": "/mode build",
        "raise_trusted": "/permission-profile trusted",
        "raise_unrestricted": "/permission-profile unrestricted --confirm",
    }
    if action in command:
        return run_sf("command", "--session", session, "--as", "bob", command[action])
    match action:
        case "view":
            return run_sf("session", "show", session, "--as", "bob")
        case "create_session":
            return run_sf("session", "create", "--project", str(world.project.pk), "--as", "bob")
        case "state_intent":
            path = world.tmp / "plan.yaml"
            path.write_text(PLAN_YAML)
            return run_sf("plan", "import", str(path), "--session", session, "--as", "bob")
        case "accept_plan":
            return run_sf("plan", "accept", str(ctx["plan"].pk), "--as", "bob")
        case "retry_task":
            task_session = str(ctx["task_session"].pk)
            return run_sf("tasks", "retry", "hello", "--session", task_session, "--as", "bob")
        case "manage_members":
            project = str(world.project.pk)
            return run_sf("members", project, "add", "carol", "viewer", "--as", "bob")
    raise AssertionError(action)


@pytest.mark.usefixtures("roots")
@pytest.mark.parametrize("action", CLI_ACTIONS)
@pytest.mark.parametrize("role", ROLES)
def test_cli_as(tmp_path: Path, role: str | None, action: str) -> None:
    world = world_make(tmp_path, role)
    code, out, err = check(world, action, role, lambda ctx: cli(world, action, ctx))
    if allowed(role, action):
        assert (code, err) == (0, ""), (out, err)
    else:
        assert code == 2
        assert err.count("\n") == 1, err
        assert "needs the" in err


def test_cli_takes_the_acting_user_from_sf_user(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    world = world_make(tmp_path, "operator")
    monkeypatch.setenv("SF_USER", "bob")
    code, _, err = run_sf("command", "--session", str(world.session.pk), "/trust trusted")
    assert code == 2
    assert "needs the approver role" in err
    assert AgentSession.objects.get(pk=world.session.pk).permission_profile == "normal"


def test_cli_without_an_acting_user_is_sfs_operator(tmp_path: Path) -> None:
    world = world_make(tmp_path, None)
    code, _, err = run_sf("command", "--session", str(world.session.pk), "/trust trusted")
    assert (code, err) == (0, "")
    assert AgentSession.objects.get(pk=world.session.pk).permission_profile == "trusted"
