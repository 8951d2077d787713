"""SF's MCP tools through a real MCP client connected in memory: the tool list and
schemas, answers in the API's schemas, and the API's authorization and problem codes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.contrib.auth.models import User

from agents_app.axes import PermissionProfile
from agents_app.models import AgentSession, RiskDecision
from api_app.tests.test_endpoints import PLAN_YAML, decision
from api_app.tokens import token_create, token_revoke
from conftest import grant
from mcp_app.tests.conftest import call, in_process, refused, text_of
from mcp_app.tools import TOOLS
from sf_core.actors import Actor
from tasks_app.lifecycle import task_transition
from tasks_app.models import FollowUp, Unit
from tasks_app.tests.conftest import make_plan, task_data

pytestmark = [pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]

EXPECTED_TOOLS = {
    "list_projects": [],
    "register_project": ["name", "repo_path"],
    "start_session": ["project_id"],
    "state_intent": ["intent"],
    "show_plan_request": ["request_id"],
    "upload_plan": ["session_id", "content"],
    "show_plan": ["plan_id"],
    "accept_plan": ["plan_id"],
    "list_tasks": ["session_id"],
    "show_task": ["task_id"],
    "show_unit": ["unit_id"],
    "list_decisions": [],
    "review_decision": ["decision_id", "action"],
    "review_task": ["task_id", "action"],
    "recover_task": ["task_id", "action"],
    "send_followup": ["text"],
    "session_status": ["session_id"],
    "run_command": ["session_id", "text"],
}


def secret_for(user: User, **kwargs: Any) -> str:
    return token_create(user=user, name="mcp", **kwargs).secret


@pytest.fixture
def secret(user: User) -> str:
    return secret_for(user)


@pytest.fixture
def staff_secret(staff_user: User) -> str:
    return secret_for(staff_user)


async def test_every_tool_is_listed_with_its_input_and_output_schema(secret: str) -> None:
    async with in_process(secret) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert {name: tools[name].input_schema.get("required", []) for name in tools} == EXPECTED_TOOLS
    for tool in tools.values():
        assert tool.description, tool.name
        assert (tool.output_schema or {}).get("type") == "object", tool.name
    review = tools["review_decision"].input_schema["properties"]
    assert review["action"]["enum"] == ["approve", "reject"]
    assert review["scope"]["enum"] == ["once", "session", "project"]
    assert tools["review_task"].input_schema["properties"]["action"]["enum"] == [
        "approve",
        "request_changes",
    ]
    profile = tools["accept_plan"].input_schema["properties"]["permission_profile"]
    assert profile["anyOf"][0]["enum"] == list(PermissionProfile.values)
    assert tools["list_tasks"].input_schema["properties"]["limit"]["maximum"] == 100
    assert "approver" in (tools["review_decision"].description or "")
    assert set(tools["show_plan"].output_schema["properties"]) >= {"id", "status", "tasks"}
    read_only = {name for name, tool in tools.items() if tool.annotations.read_only_hint}
    assert read_only == {
        name for name in EXPECTED_TOOLS if name.split("_")[0] in ("list", "show")
    } | {"session_status"}
    assert len(TOOLS) == len(EXPECTED_TOOLS)


async def test_a_plan_is_uploaded_shown_accepted_and_its_tasks_listed(
    secret: str, agent_session: AgentSession
) -> None:
    async with in_process(secret) as client:
        projects = await call(client, "list_projects")
        assert [(p["name"], p["role"]) for p in projects["items"]] == [("sample", "admin")]
        plan = await call(
            client, "upload_plan", session_id=agent_session.pk, content=PLAN_YAML, name="p.yaml"
        )
        assert [t["key"] for t in plan["tasks"]] == ["one", "two"]
        shown = await client.call_tool("show_plan", {"plan_id": plan["id"]})
        assert shown.structured_content == plan
        assert f"task {plan['tasks'][0]['id']} one [" in text_of(shown)
        accepted = await call(client, "accept_plan", plan_id=plan["id"])
        assert accepted["status"] != "proposed"
        assert accepted["accepted_at"] is not None
        page = await call(client, "list_tasks", session_id=agent_session.pk, limit=1, offset=1)
        assert (page["count"], [t["key"] for t in page["items"]]) == (2, ["two"])
        task = await call(client, "show_task", task_id=page["items"][0]["id"])
        assert (task["session_id"], task["units"]) == (agent_session.pk, [])
        status = await call(client, "session_status", session_id=agent_session.pk)
        assert [t["key"] for t in status["tasks"]] == ["one", "two"]
        assert status["summary"].startswith(f"session {agent_session.pk}")
        command = await call(client, "run_command", session_id=agent_session.pk, text="/pause")
        assert command["session"]["paused"] is True


async def test_a_viewer_cannot_approve_and_is_told_why(
    staff_user: User, staff_secret: str, agent_session: AgentSession
) -> None:
    await database_sync_to_async(grant)(staff_user, agent_session.project, "viewer")
    pending = await database_sync_to_async(decision)(agent_session)
    plan = await database_sync_to_async(make_plan)(agent_session, task_data("a"))
    task_id = await database_sync_to_async(lambda: plan.tasks.get().pk)()
    async with in_process(staff_secret) as client:
        listed = await call(client, "list_decisions")
        assert [d["id"] for d in listed["items"]] == [pending.pk]
        problem = await refused(client, "review_decision", decision_id=pending.pk, action="approve")
        assert (problem["status"], problem["code"]) == (403, "forbidden")
        assert "needs the approver role (you are viewer)" in problem["detail"]
        review = await refused(client, "review_task", task_id=task_id, action="approve")
        assert review["code"] == "forbidden"
        assert "review a task" in review["detail"]
        accept = await refused(client, "accept_plan", plan_id=plan.pk)
        assert accept["code"] == "forbidden"
    decision_after = await database_sync_to_async(RiskDecision.objects.get)(pk=pending.pk)
    assert decision_after.review_status == "pending"


async def test_another_persons_project_is_not_found(
    staff_secret: str, agent_session: AgentSession
) -> None:
    plan = await database_sync_to_async(make_plan)(agent_session, task_data("a"))
    pending = await database_sync_to_async(decision)(agent_session)
    async with in_process(staff_secret) as client:
        assert (await call(client, "list_projects"))["items"] == []
        assert (await call(client, "list_decisions"))["count"] == 0
        for tool, arguments in (
            ("show_plan", {"plan_id": plan.pk}),
            ("list_tasks", {"session_id": agent_session.pk}),
            ("session_status", {"session_id": agent_session.pk}),
            ("state_intent", {"intent": "x", "project_id": agent_session.project_id}),
            ("review_decision", {"decision_id": pending.pk, "action": "approve"}),
        ):
            problem = await refused(client, tool, **arguments)
            assert (problem["status"], problem["code"]) == (404, "not-found"), tool


async def test_a_token_narrowed_to_another_project_does_not_see_this_one(
    user: User, agent_session: AgentSession, tmp_path: Path
) -> None:
    from agents_app.services import project_create
    from conftest import make_git_repo

    other = await database_sync_to_async(project_create)(
        name="other", repo_path=str(make_git_repo(tmp_path / "other"))
    )
    await database_sync_to_async(grant)(user, other, "admin")
    narrowed = await database_sync_to_async(secret_for)(user, projects=[other])
    async with in_process(narrowed) as client:
        assert [p["name"] for p in (await call(client, "list_projects"))["items"]] == ["other"]
        problem = await refused(client, "session_status", session_id=agent_session.pk)
        assert problem["code"] == "not-found"


async def test_wrong_arguments_and_unknown_tools_are_problems(secret: str, project: Any) -> None:
    async with in_process(secret) as client:
        bad = await refused(client, "show_plan", plan_id="seven")
        assert (bad["status"], bad["code"]) == (422, "validation")
        assert bad["errors"][0]["loc"] == ["plan_id"]
        both = await refused(
            client, "state_intent", intent="x", project_id=project.pk, session_id=1
        )
        assert both["code"] == "validation"
        empty = await refused(client, "state_intent", intent=" ", project_id=project.pk)
        assert (empty["code"], empty["errors"][0]["loc"]) == ("validation", ["intent"])
        unknown = await refused(client, "drop_database")
        assert (unknown["status"], unknown["code"]) == (404, "not-found")
        limit = await refused(client, "list_tasks", session_id=1, limit=101)
        assert limit["code"] == "validation"


async def test_a_revoked_token_stops_working_at_once(user: User, project: Any) -> None:
    issued = await database_sync_to_async(token_create)(user=user, name="soon revoked")
    async with in_process(issued.secret) as client:
        await call(client, "list_projects")
        await database_sync_to_async(token_revoke)(user=user, token_id=issued.token.pk)
        problem = await refused(client, "list_projects")
        assert (problem["status"], problem["code"]) == (401, "unauthenticated")


async def test_a_unit_shows_its_diff_and_its_trace_when_asked(
    secret: str, agent_session: AgentSession
) -> None:
    def unit_with_trace() -> int:
        from agents_app.models import TraceEvent
        from tasks_app.models import Unit

        task = make_plan(agent_session, task_data("a")).tasks.get()
        patch = "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n"
        unit = Unit.objects.create(task=task, attempt=1, checkpoint_patch=patch, summary="did it")
        TraceEvent.objects.create(
            session=agent_session, unit=unit, seq=1, kind="tool_call", name="read_file", payload={}
        )
        return unit.pk

    unit_id = await database_sync_to_async(unit_with_trace)()
    async with in_process(secret) as client:
        unit = await client.call_tool("show_unit", {"unit_id": unit_id})
        assert unit.structured_content is not None
        assert unit.structured_content["files"] == [
            {"path": "x.py", "status": "modified", "added": 1, "removed": 1}
        ]
        assert unit.structured_content["trace"] == []
        assert "modified x.py +1 -1" in text_of(unit)
        traced = await call(client, "show_unit", unit_id=unit_id, include_trace=True)
        assert [event["name"] for event in traced["trace"]] == ["read_file"]


async def test_a_followup_goes_to_a_running_unit_and_a_viewer_is_refused(
    staff_user: User, staff_secret: str, agent_session: AgentSession
) -> None:
    """``send_followup``: an operator's message to a running unit is stored for its next
    step; a viewer is refused naming the role; an ended unit and bad text too."""
    unit = await database_sync_to_async(running_unit)(agent_session)
    await database_sync_to_async(grant)(staff_user, agent_session.project, "viewer")
    words = "Keep the public API unchanged."
    async with in_process(staff_secret) as client:
        problem = await refused(client, "send_followup", unit_id=unit.pk, text=words)
        assert (problem["status"], problem["code"]) == (403, "forbidden")
        assert "steer the session" in problem["detail"]
        assert "needs the operator role (you are viewer)" in problem["detail"]
        await database_sync_to_async(grant)(staff_user, agent_session.project, "operator")
        sent = await call(client, "send_followup", unit_id=unit.pk, text=words)
        assert (sent["unit_id"], sent["author"], sent["text"]) == (unit.pk, "grace", words)
        assert sent["delivery"] == "unit 1 reads it before its next step"
        empty = await refused(client, "send_followup", task_id=unit.task_id, text=" ")
        assert empty["detail"].startswith("the follow-up message is empty")
        both = await refused(client, "send_followup", task_id=1, unit_id=unit.pk, text=words)
        assert both["code"] == "validation"
        await database_sync_to_async(Unit.objects.filter(pk=unit.pk).update)(status="failed")
        ended = await refused(client, "send_followup", unit_id=unit.pk, text=words)
        assert (ended["status"], ended["code"]) == (409, "conflict")
        assert "has already ended (failed)" in ended["detail"]
    count = await database_sync_to_async(FollowUp.objects.count)()
    assert count == 1


def running_unit(session: AgentSession) -> Unit:
    task = make_plan(session, task_data("a")).tasks.get()
    task_transition(task=task, to="in_progress", reason="unit started", actor=Actor.system("w"))
    return Unit.objects.create(task=task, attempt=1)
