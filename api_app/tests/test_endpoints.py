from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from agents_app.models import AgentSession, Project, RiskDecision
from api_app.models import IdempotencyRecord
from api_app.tests.conftest import Api, api_for
from conftest import grant, make_git_repo
from tasks_app.models import Plan, Task
from tasks_app.tests.conftest import make_plan, task_data

pytestmark = pytest.mark.django_db
PLAN_YAML = """summary: two steps
intent: do it
tasks:
  - key: one
    title: First
    acceptance_criteria: [it works]
    verify: ["true"]
  - key: two
    title: Second
    acceptance_criteria: [it works too]
    verify: ["true"]
    depends_on: [one]
"""


def decision(session: AgentSession) -> RiskDecision:
    return RiskDecision.objects.create(
        session=session,
        tool="shell",
        input_normalized={"command": "rm -rf build"},
        input_hash="x" * 64,
        risk_class="destructive",
        decision="ask",
        rule="test",
        work_mode="build",
        run_control="manual",
        permission_profile="normal",
        model_mode="smart",
        surface="web",
        review_status="pending",
    )


def test_projects_list_show_and_create(
    api: Api, project: Project, registrar: User, tmp_path: Path
) -> None:
    assert api.get("/projects").json() == [
        {
            "id": project.pk,
            "name": "sample",
            "repo_path": project.repo_path,
            "base_branch": "main",
            "role": "admin",
        }
    ]
    assert api.get(f"/projects/{project.pk}").json()["name"] == "sample"
    repo = make_git_repo(tmp_path / "new")
    created = api.post("/projects", {"name": "new", "repo_path": str(repo)})
    assert created.status_code == 201, created.content
    assert created.json()["role"] == "admin"


def test_a_session_is_created_shown_and_commanded(api: Api, project: Project) -> None:
    created = api.post("/sessions", {"project_id": project.pk, "title": "t"})
    assert created.status_code == 201, created.content
    session_id = created.json()["id"]
    assert api.get(f"/sessions/{session_id}").json()["title"] == "t"
    answer = api.post(f"/sessions/{session_id}/commands", {"text": "/mode build --autonomous"})
    assert answer.status_code == 200, answer.content
    assert answer.json()["session"]["axes"]["work_mode"] == "build"
    assert answer.json()["session"]["axes"]["run_control"] == "autonomous"
    assert (
        api.post(f"/sessions/{session_id}/commands", {"text": "/steer model-mode fast"}).status_code
        == 200
    )
    snapshot = api.get(f"/sessions/{session_id}/snapshot").json()
    assert snapshot["session"]["id"] == session_id


def test_a_bad_command_is_a_problem(api: Api, agent_session: AgentSession) -> None:
    response = api.post(f"/sessions/{agent_session.pk}/commands", {"text": "/nonsense"})
    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    body = response.json()
    assert body["code"] == "command-rejected"
    assert body["type"] == "/api/problems/command-rejected"
    assert {"title", "status", "detail"} <= set(body)


def test_validation_errors_are_422_problems_with_fields(api: Api) -> None:
    response = api.post("/sessions", {"title": "no project"})
    assert response.status_code == 422
    body = response.json()
    assert body["code"] == "validation"
    assert any("project_id" in error["loc"] for error in body["errors"])


def test_plan_upload_show_accept_and_tasks_page(api: Api, agent_session: AgentSession) -> None:
    uploaded = api.post(
        f"/sessions/{agent_session.pk}/plans", {"name": "plan.yaml", "content": PLAN_YAML}
    )
    assert uploaded.status_code == 201, uploaded.content
    plan_id = uploaded.json()["id"]
    assert [t["key"] for t in api.get(f"/plans/{plan_id}").json()["tasks"]] == ["one", "two"]
    accepted = api.post(f"/plans/{plan_id}/accept", {"autonomous": False})
    assert accepted.status_code == 200, accepted.content
    assert accepted.json()["status"] == Plan.objects.get(pk=plan_id).status != "proposed"
    page = api.get(f"/sessions/{agent_session.pk}/tasks", limit=1, offset=1).json()
    assert page["count"] == 2
    assert [t["key"] for t in page["items"]] == ["two"]
    assert api.get(f"/sessions/{agent_session.pk}/tasks", limit=101).status_code == 422


def test_a_task_is_cancelled_and_an_unknown_action_is_a_validation_problem(
    api: Api, agent_session: AgentSession
) -> None:
    task = make_plan(agent_session, task_data("a")).tasks.get()
    unknown = api.post(f"/tasks/{task.pk}/explode")
    assert unknown.status_code == 422
    assert unknown.json()["errors"][0]["loc"] == ["path", "action"]
    answer = api.post(f"/tasks/{task.pk}/cancel")
    assert answer.status_code == 200, answer.content
    assert Task.objects.get(pk=task.pk).status == "cancelled"
    again = api.post(f"/tasks/{task.pk}/cancel")
    assert again.status_code == 409
    assert again.json()["code"] == "conflict"


def test_a_paused_task_is_resumed_and_only_a_running_one_is_stopped(
    api: Api, agent_session: AgentSession, user: User
) -> None:
    task = make_plan(agent_session, task_data("a")).tasks.get()
    Task.objects.filter(pk=task.pk).update(status="paused", hold_reason="stopped")
    not_running = api.post(f"/tasks/{task.pk}/stop")
    assert not_running.status_code == 409, not_running.content
    assert "only a running task can be stopped" in not_running.json()["detail"]
    resumed = api.post(f"/tasks/{task.pk}/resume?reason=go on")
    assert resumed.status_code == 200, resumed.content
    assert resumed.json()["status"] == "todo"
    task.refresh_from_db()
    assert (task.status, task.hold_reason) == ("todo", "")
    assert task.status_reason.startswith(f"resumed by {user.username}: go on")
    again = api.post(f"/tasks/{task.pk}/resume")
    assert again.status_code == 409
    assert "only a task that is paused can be resumed" in again.json()["detail"]


def test_decisions_are_listed_and_reviewed_with_a_scope(
    api: Api, agent_session: AgentSession
) -> None:
    pending = decision(agent_session)
    listed = api.get("/decisions").json()
    assert [d["id"] for d in listed["items"]] == [pending.pk]
    answer = api.post(f"/decisions/{pending.pk}/review", {"action": "approve", "scope": "session"})
    assert answer.status_code == 200, answer.content
    assert answer.json()["review_status"] == "approved"
    assert answer.json()["review_scope"] == "session"
    assert api.get("/decisions").json()["count"] == 0
    assert api.post(f"/decisions/{pending.pk}/review", {"action": "reject"}).status_code == 409


def test_skills_metrics_and_plan_requests(api: Api, project: Project) -> None:
    assert api.get(f"/projects/{project.pk}/skills").status_code == 200
    metrics = api.get("/metrics", by="week").json()
    assert metrics["by"] == "week"
    assert api.get("/metrics", since="not a date").json()["code"] == "validation"
    assert api.get("/metrics", since="2026-02-01", until="2026-01-01").json()["code"] == "rejected"
    assert api.get("/plan-requests/999999").status_code == 404


# --- authorization ---------------------------------------------------------------------


@pytest.fixture
def viewer_api(client: Client, staff_user: User, agent_session: AgentSession) -> Api:
    grant(staff_user, agent_session.project, "viewer")
    return api_for(client, staff_user)


def test_a_viewer_reads_but_cannot_command_or_review(
    viewer_api: Api, agent_session: AgentSession
) -> None:
    assert viewer_api.get(f"/sessions/{agent_session.pk}").status_code == 200
    refused = viewer_api.post(f"/sessions/{agent_session.pk}/commands", {"text": "/pause"})
    assert refused.status_code == 403
    assert refused.json()["code"] == "forbidden"
    pending = decision(agent_session)
    review = viewer_api.post(f"/decisions/{pending.pk}/review", {"action": "approve"})
    assert review.status_code == 403


def test_another_persons_project_is_404(
    client: Client, staff_user: User, agent_session: AgentSession
) -> None:
    stranger = api_for(client, staff_user)
    task = make_plan(agent_session, task_data("a")).tasks.get()
    for path in (
        f"/projects/{agent_session.project_id}",
        f"/sessions/{agent_session.pk}",
        f"/sessions/{agent_session.pk}/snapshot",
        f"/plans/{task.plan_id}",
    ):
        response = stranger.get(path)
        assert response.status_code == 404, path
        assert response.json()["code"] == "not-found"
    assert stranger.post(f"/tasks/{task.pk}/cancel").status_code == 404
    assert stranger.get("/decisions").json()["count"] == 0


# --- idempotency -----------------------------------------------------------------------


def test_a_repeated_key_returns_the_first_answer_and_creates_nothing(
    api: Api, project: Project
) -> None:
    body: dict[str, Any] = {"project_id": project.pk, "title": "once"}
    first = api.post("/sessions", body, key="k-1")
    second = api.post("/sessions", body, key="k-1")
    assert first.status_code == second.status_code == 201
    assert first.json() == second.json()
    assert second["Idempotent-Replayed"] == "true"
    assert AgentSession.objects.filter(title="once").count() == 1
    assert IdempotencyRecord.objects.count() == 1
    conflict = api.post("/sessions", {**body, "title": "other"}, key="k-1")
    assert conflict.status_code == 409
    assert conflict.json()["code"] == "idempotency-conflict"
    assert AgentSession.objects.filter(title="other").count() == 0


def test_a_unit_shows_its_trace_and_diff(api: Api, agent_session: AgentSession) -> None:
    from agents_app.models import TraceEvent
    from tasks_app.models import Unit

    task = make_plan(agent_session, task_data("a")).tasks.get()
    patch = "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n"
    unit = Unit.objects.create(task=task, attempt=1, checkpoint_patch=patch)
    TraceEvent.objects.create(
        session=agent_session,
        unit=unit,
        seq=1,
        kind="tool_call",
        name="read_file",
        payload={"p": 1},
    )
    body = api.get(f"/units/{unit.pk}").json()
    assert body["trace"] == [
        {"seq": 1, "kind": "tool_call", "name": "read_file", "payload": {"p": 1}}
    ]
    assert body["files"] == [{"path": "x.py", "status": "modified", "added": 1, "removed": 1}]
    assert body["patch"] == patch


def test_a_task_not_in_review_cannot_be_approved(api: Api, agent_session: AgentSession) -> None:
    task = make_plan(agent_session, task_data("a")).tasks.get()
    response = api.post(f"/tasks/{task.pk}/review", {"action": "approve"})
    assert response["Content-Type"] == "application/problem+json"
    assert response.status_code in (400, 409)
    assert api.post(f"/tasks/{task.pk}/review", {"action": "merge"}).status_code == 422


def test_an_intent_starts_planning_once_per_key(api: Api, agent_session: AgentSession) -> None:
    from tasks_app.models import PlanRequest
    from tests.fixtures import HANDWRITTEN_DEMO_TRACE

    AgentSession.objects.filter(pk=agent_session.pk).update(
        replay_trace=str(HANDWRITTEN_DEMO_TRACE)
    )
    body = {"intent": "add a --shout flag"}
    first = api.post(f"/sessions/{agent_session.pk}/intents", body, key="i-1")
    assert first.status_code == 202, first.content
    assert first.json()["status"] == "planning"
    assert api.post(f"/sessions/{agent_session.pk}/intents", body, key="i-1").json() == first.json()
    assert PlanRequest.objects.count() == 1
    shown = api.get(f"/plan-requests/{first.json()['id']}").json()
    assert shown["intent"] == "add a --shout flag"
    empty = api.post(f"/sessions/{agent_session.pk}/intents", {"intent": " "})
    assert empty.status_code == 422
    assert empty.json()["errors"][0]["loc"] == ["body", "data", "intent"]


def test_a_task_is_shown_with_its_units(api: Api, agent_session: AgentSession) -> None:
    from tasks_app.models import Unit

    task = make_plan(agent_session, task_data("a")).tasks.get()
    unit = Unit.objects.create(task=task, attempt=1, summary="tried")
    body = api.get(f"/tasks/{task.pk}").json()
    assert (body["key"], body["session_id"]) == ("a", agent_session.pk)
    assert [(u["id"], u["attempt"], u["summary"]) for u in body["units"]] == [(unit.pk, 1, "tried")]


def test_another_persons_task_is_not_shown(
    client: Client, staff_user: User, agent_session: AgentSession
) -> None:
    task = make_plan(agent_session, task_data("a")).tasks.get()
    assert api_for(client, staff_user).get(f"/tasks/{task.pk}").status_code == 404
