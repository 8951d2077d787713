"""``POST /api/tasks/{id}/followups`` and ``/api/units/{id}/followups``: a person's
message to a task's agent, under the steering roles (docs/follow-ups.md)."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client

from agents_app.models import AgentSession
from agents_app.services import project_create
from api_app.tests.conftest import Api, api_for
from conftest import grant, make_git_repo
from sf_core.actors import Actor
from tasks_app.lifecycle import task_transition
from tasks_app.models import MAX_FOLLOWUP_CHARS, FollowUp, Task, Unit, UnitStatus
from tasks_app.tests.conftest import make_plan, task_data

pytestmark = pytest.mark.django_db
WORDS = "Use the logging module, not print."


@pytest.fixture
def task(agent_session: AgentSession) -> Task:
    return make_plan(agent_session, task_data("a")).tasks.get()


@pytest.fixture
def operator_api(client: Client, staff_user: User, agent_session: AgentSession) -> Api:
    grant(staff_user, agent_session.project, "operator")
    return api_for(client, staff_user)


def running(task: Task) -> Unit:
    """The task as a worker holds it: in progress, its unit running."""
    task_transition(task=task, to="in_progress", reason="unit started", actor=Actor.system("w"))
    return Unit.objects.create(task=task, attempt=1)


def test_a_member_sends_a_followup_to_a_running_unit(operator_api: Api, task: Task) -> None:
    unit = running(task)
    response = operator_api.post(f"/units/{unit.pk}/followups", {"text": WORDS})
    assert response.status_code == 200, response.json()
    body = response.json()
    assert (body["unit_id"], body["task_key"], body["author"], body["text"]) == (
        unit.pk,
        "a",
        "grace",
        WORDS,
    )
    assert body["delivery"] == "unit 1 reads it before its next step"
    assert body["delivered_at"] is None  # the unit takes it before its next model step
    stored = FollowUp.objects.get()
    assert (stored.unit_id, stored.author_id, stored.author_label) == (
        unit.pk,
        User.objects.get(username="grace").pk,
        "grace",
    )
    # Through the task: the same running unit.
    again = operator_api.post(f"/tasks/{task.pk}/followups", {"text": "and keep it short"})
    assert again.json()["unit_id"] == unit.pk


def test_a_viewer_may_not_and_is_told_which_role_it_needs(
    client: Client, staff_user: User, task: Task, agent_session: AgentSession
) -> None:
    grant(staff_user, agent_session.project, "viewer")
    viewer = api_for(client, staff_user)
    unit = running(task)
    for path in (f"/units/{unit.pk}/followups", f"/tasks/{task.pk}/followups"):
        refused = viewer.post(path, {"text": WORDS})
        assert refused.status_code == 403, path
        problem = refused.json()
        assert problem["code"] == "forbidden"
        assert "steer the session" in problem["detail"]
        assert "needs the operator role (you are viewer)" in problem["detail"]
    assert not FollowUp.objects.exists()


def test_bad_followups_get_a_problem_naming_what_is_wrong(
    operator_api: Api, task: Task, tmp_path: Path
) -> None:
    path = f"/tasks/{task.pk}/followups"
    empty = operator_api.post(path, {"text": "   "})
    assert (empty.status_code, empty.json()["code"]) == (400, "rejected")
    assert empty.json()["detail"].startswith("the follow-up message is empty")
    long = operator_api.post(path, {"text": "x" * (MAX_FOLLOWUP_CHARS + 1)})
    assert long.status_code == 400
    assert long.json()["detail"] == (
        f"the follow-up message is {MAX_FOLLOWUP_CHARS + 1} characters; at most {MAX_FOLLOWUP_CHARS}"
    )
    missing = operator_api.post(path, {"words": WORDS})
    assert (missing.status_code, missing.json()["code"]) == (422, "validation")
    other = project_create(name="other", repo_path=str(make_git_repo(tmp_path / "other")))
    elsewhere = operator_api.post(path, {"text": WORDS, "project_id": other.pk})
    assert (elsewhere.status_code, elsewhere.json()["code"]) == (400, "rejected")
    assert f"not to project {other.pk}" in elsewhere.json()["detail"]
    ended = Unit.objects.create(task=task, attempt=1, status=UnitStatus.FAILED)
    late = operator_api.post(f"/units/{ended.pk}/followups", {"text": WORDS})
    assert (late.status_code, late.json()["code"]) == (409, "conflict")
    assert "has already ended (failed); send the follow-up to task a" in late.json()["detail"]
    assert not FollowUp.objects.exists()


def test_another_persons_task_is_not_found(client: Client, staff_user: User, task: Task) -> None:
    stranger = api_for(client, staff_user)
    assert stranger.post(f"/tasks/{task.pk}/followups", {"text": WORDS}).status_code == 404
    unit = running(task)
    assert stranger.post(f"/units/{unit.pk}/followups", {"text": WORDS}).status_code == 404
