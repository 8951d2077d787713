"""The schedules API: the same services and access rules as the page, problem+json."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from agents_app.models import Project
from api_app.tests.conftest import Api, api_for
from conftest import grant
from tasks_app.models import Schedule, ScheduleRun
from tasks_app.tests.schedule_helpers import PLAN_TEMPLATE

pytestmark = pytest.mark.django_db
BODY = {
    "name": "nightly bump",
    "kind": "plan",
    "plan_text": PLAN_TEMPLATE,
    "cron": "30 2 * * *",
    "timezone": "Europe/Berlin",
    "catch_up_window": "PT2H",
}


@pytest.fixture
def bob(django_user_model: Any) -> User:
    user: User = django_user_model.objects.create(username="bob")
    return user


def test_an_operator_creates_runs_pauses_and_deletes_a_schedule(
    client: Client, bob: User, project: Project
) -> None:
    grant(bob, project, "operator")
    api = api_for(client, bob)
    created = api.post(f"/projects/{project.pk}/schedules", BODY, key="k1")
    assert created.status_code == 201
    body = created.json()
    assert (body["run_as"], body["cron"], body["catch_up_window"]) == ("bob", "30 2 * * *", "PT2H")
    assert body["next_run_local"].endswith(("02:30 CET", "02:30 CEST"))
    again = api.post(f"/projects/{project.pk}/schedules", BODY, key="k1")
    assert again.json() == body
    assert Schedule.objects.count() == 1

    listed = api.get(f"/projects/{project.pk}/schedules").json()
    assert [row["id"] for row in listed] == [body["id"]]
    run = api.post(f"/schedules/{body['id']}/run")
    assert run.status_code == 201
    assert (run.json()["status"], run.json()["trigger"]) == ("proposed", "manual")
    runs = api.get(f"/schedules/{body['id']}/runs").json()
    assert runs["count"] == 1
    assert runs["items"][0]["session_id"] == run.json()["session_id"]

    paused = api.post(f"/schedules/{body['id']}/pause").json()
    assert (paused["paused"], paused["next_run_at"]) == (True, None)
    assert api.post(f"/schedules/{body['id']}/resume").json()["paused"] is False
    deleted = api.client.delete(
        f"/api/schedules/{body['id']}", HTTP_AUTHORIZATION=f"Bearer {api.secret}"
    )
    assert deleted.status_code == 204
    assert not Schedule.objects.exists()


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        ("cron", "30 2 * *", "has 4 fields"),
        ("timezone", "Moon/Base", "unknown time zone 'Moon/Base'"),
        ("permission_profile", "root", "Input should be"),
    ],
)
def test_bad_input_is_a_validation_problem_naming_the_field(
    api: Api, project: Project, field: str, value: str, words: str
) -> None:
    response = api.post(f"/projects/{project.pk}/schedules", BODY | {field: value})
    assert response.status_code == 422
    assert response["Content-Type"] == "application/problem+json"
    problem = response.json()
    assert problem["code"] == "validation"
    assert any(field in error["loc"] and words in error["msg"] for error in problem["errors"])
    assert not Schedule.objects.exists()


def test_a_viewer_lists_but_cannot_create_and_a_stranger_gets_404(
    client: Client, bob: User, project: Project, api: Api
) -> None:
    made = api.post(f"/projects/{project.pk}/schedules", BODY).json()
    grant(bob, project, "viewer")
    viewer = api_for(client, bob)
    assert viewer.get(f"/projects/{project.pk}/schedules").status_code == 200
    refused = viewer.post(f"/projects/{project.pk}/schedules", BODY | {"name": "other"})
    assert refused.status_code == 403
    assert refused.json()["code"] == "forbidden"
    assert viewer.post(f"/schedules/{made['id']}/run").status_code == 403
    assert not ScheduleRun.objects.exists()

    grant(bob, project, None)
    for path in (f"/projects/{project.pk}/schedules", f"/schedules/{made['id']}"):
        assert viewer.get(path).status_code == 404
    assert viewer.post(f"/schedules/{made['id']}/pause").status_code == 404
    assert client.get(f"/api/schedules/{made['id']}").status_code == 401
    assert Schedule.objects.get().paused is False


def test_an_operator_cannot_schedule_an_autonomous_run(
    client: Client, bob: User, project: Project
) -> None:
    grant(bob, project, "operator")
    response = api_for(client, bob).post(
        f"/projects/{project.pk}/schedules", BODY | {"run_control": "autonomous"}
    )
    assert response.status_code == 403
    assert "accept or reject a plan" in response.json()["detail"]
