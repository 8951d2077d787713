"""The lists and details beside the core calls: sessions, plans, one task, one decision,
a unit's trace and diff, and ``/steer`` as a typed call."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from agents_app.models import AgentSession, ModeTransition, RiskDecision, TraceEvent
from agents_app.services import session_create
from api_app.tests.conftest import Api, api_for
from api_app.tests.test_endpoints import decision
from tasks_app.models import Unit
from tasks_app.tests.conftest import make_plan, task_data

pytestmark = pytest.mark.django_db
PATCH = (
    "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@\n-a\n+b\n c\n"
    "diff --git a/new.py b/new.py\nnew file mode 100644\n--- /dev/null\n+++ b/new.py\n"
    "@@ -0,0 +1 @@\n+print(1)\n"
)


def test_sessions_are_listed_newest_first_a_page_at_a_time(
    api: Api, agent_session: AgentSession, user: User
) -> None:
    newer = session_create(project=agent_session.project, created_by=user, title="newer")
    page = api.get("/sessions", limit=1).json()
    assert (page["count"], [s["id"] for s in page["items"]]) == (2, [newer.pk])
    assert [s["id"] for s in api.get("/sessions", offset=1).json()["items"]] == [agent_session.pk]
    assert api.get("/sessions", project_id=agent_session.project_id + 1).json()["count"] == 0
    assert api.get("/sessions", status="completed").json()["count"] == 0


def test_a_sessions_plans_are_listed_with_their_tasks(
    api: Api, agent_session: AgentSession
) -> None:
    first = make_plan(agent_session, task_data("a"))
    second = make_plan(agent_session, task_data("b"), task_data("c"))
    page = api.get(f"/sessions/{agent_session.pk}/plans").json()
    assert [p["id"] for p in page["items"]] == [first.pk, second.pk]
    assert [t["key"] for t in page["items"][1]["tasks"]] == ["b", "c"]


def test_a_task_shows_its_spec_dependencies_and_units(
    api: Api, agent_session: AgentSession
) -> None:
    plan = make_plan(agent_session, task_data("a"), task_data("b", depends_on=["a"]))
    task = plan.tasks.get(key="b")
    unit = Unit.objects.create(task=task, attempt=1, status="failed", model="m")
    body = api.get(f"/tasks/{task.pk}").json()
    assert body["key"] == "b"
    assert body["depends_on"] == ["a"]
    assert body["acceptance_criteria"] == ["b works", "b is tested"]
    assert [(u["id"], u["status"]) for u in body["units"]] == [(unit.pk, "failed")]


def test_a_units_trace_comes_a_page_at_a_time_and_its_diff_by_file(
    api: Api, agent_session: AgentSession
) -> None:
    task = make_plan(agent_session, task_data("a")).tasks.get()
    unit = Unit.objects.create(task=task, attempt=1, checkpoint_patch=PATCH)
    for seq in range(1, 6):
        kind = "tool_call" if seq % 2 else "model_step"
        TraceEvent.objects.create(session=agent_session, unit=unit, seq=seq, kind=kind, name="x")
    page = api.get(f"/units/{unit.pk}/trace", limit=2, offset=1).json()
    assert (page["count"], [e["seq"] for e in page["items"]]) == (5, [2, 3])
    calls = api.get(f"/units/{unit.pk}/trace", kind="tool_call").json()
    assert [e["seq"] for e in calls["items"]] == [1, 3, 5]
    diff = api.get(f"/units/{unit.pk}/diff").json()
    assert [(f["path"], f["status"], f["added"], f["removed"]) for f in diff["files"]] == [
        ("x.py", "modified", 1, 1),
        ("new.py", "added", 1, 0),
    ]
    assert (diff["added"], diff["removed"], diff["patch"]) == (2, 1, PATCH)


def test_a_decision_is_shown(api: Api, agent_session: AgentSession) -> None:
    pending = decision(agent_session)
    body = api.get(f"/decisions/{pending.pk}").json()
    assert (body["id"], body["review_status"], body["tool"]) == (pending.pk, "pending", "shell")


def test_steer_is_a_typed_command_applied_when_its_scope_is_due(
    api: Api, agent_session: AgentSession
) -> None:
    body = {"axis": "model-mode", "value": "fast", "scope": "after-current-unit"}
    answer = api.post(f"/sessions/{agent_session.pk}/steer", body, key="s-1")
    assert answer.status_code == 200, answer.content
    assert answer.json()["pending"] is True
    transition = ModeTransition.objects.get(pk=answer.json()["transition_id"])
    assert (transition.scope, transition.status) == ("after-current-unit", "pending")
    assert api.post(f"/sessions/{agent_session.pk}/steer", body, key="s-1").json() == answer.json()
    assert ModeTransition.objects.filter(session=agent_session).count() == 1
    wrong = api.post(f"/sessions/{agent_session.pk}/steer", {"axis": "mode", "value": "dance"})
    assert wrong.status_code == 400
    assert wrong.json()["code"] == "command-rejected"
    unconfirmed = api.post(
        f"/sessions/{agent_session.pk}/steer",
        {"axis": "permission-profile", "value": "unrestricted"},
    )
    assert unconfirmed.status_code == 400
    assert "--confirm" in unconfirmed.json()["detail"]


def test_strangers_see_none_of_it(
    client: Client, staff_user: User, agent_session: AgentSession
) -> None:
    stranger = api_for(client, staff_user)
    task = make_plan(agent_session, task_data("a")).tasks.get()
    unit = Unit.objects.create(task=task, attempt=1)
    pending = decision(agent_session)
    assert stranger.get("/sessions").json()["count"] == 0
    for path in (
        f"/sessions/{agent_session.pk}/plans",
        f"/tasks/{task.pk}",
        f"/units/{unit.pk}/trace",
        f"/units/{unit.pk}/diff",
        f"/decisions/{pending.pk}",
    ):
        assert stranger.get(path).status_code == 404, path
    steer = stranger.post(f"/sessions/{agent_session.pk}/steer", {"axis": "mode", "value": "build"})
    assert steer.status_code == 404
    assert RiskDecision.objects.get(pk=pending.pk).review_status == "pending"
