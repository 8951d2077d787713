"""One test per class of bad input the schemathesis run (test_schemathesis.py) found:
each answered before as a 500, an HTML page, a hang or an undocumented shape, and now
as a problem with a stable code and a message naming what is wrong."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from agents_app.models import AgentSession, Project
from api_app.api import openapi_document
from api_app.tests.conftest import Api

pytestmark = pytest.mark.django_db


def field_error(response: Any) -> list[Any]:
    assert response.status_code == 422, response.content
    assert response["Content-Type"] == "application/problem+json"
    body = response.json()
    assert body["code"] == "validation"
    return [error["loc"][-1] for error in body["errors"]]


def test_text_the_database_cannot_store_is_refused_by_the_schema(
    api: Api, project: Project, agent_session: AgentSession
) -> None:
    """NUL in a title was a 500 (PostgreSQL refuses it in text)."""
    assert field_error(api.post("/sessions", {"project_id": project.pk, "title": "a\x00b"})) == [
        "title"
    ]
    command = api.post(f"/sessions/{agent_session.pk}/commands", {"text": "/pause\x00"})
    assert field_error(command) == ["text"]
    assert AgentSession.objects.count() == 1


def test_a_plan_file_name_that_is_no_file_name_is_refused(
    api: Api, agent_session: AgentSession
) -> None:
    """A name of "." made SF write the plan to a directory: a 500."""
    for name in (".", "../plan.yaml", "plan.exe"):
        response = api.post(
            f"/sessions/{agent_session.pk}/plans", {"name": name, "content": "summary: x"}
        )
        assert field_error(response) == ["name"], name


def test_a_page_beyond_any_table_is_refused(api: Api, agent_session: AgentSession) -> None:
    """An offset past PostgreSQL's bigint was a 500."""
    response = api.get(f"/sessions/{agent_session.pk}/tasks", offset=10**20)
    assert field_error(response) == ["offset"]


def test_a_metrics_window_is_bounded(api: Api) -> None:
    """Centuries of days kept a request busy for minutes; the last day overflowed."""
    for params, words in [
        ({"since": "0500-01-01", "until": "2026-01-01"}, "at most 400 days by day"),
        ({"until": "9999-12-31"}, "past the last day"),
    ]:
        response = api.get("/metrics", **params)
        assert response.status_code == 400, params
        assert response.json()["code"] == "rejected"
        assert words in response.json()["detail"]
    assert api.get("/metrics", since="2020-01-01", until="2026-01-01", by="week").status_code == 200


def test_unknown_fields_and_values_are_named(api: Api, agent_session: AgentSession) -> None:
    """A misspelt field was ignored; an unknown profile reached the service."""
    task_review = api.post(f"/sessions/{agent_session.pk}/commands", {"txt": "/pause"})
    assert set(field_error(task_review)) == {"text", "txt"}
    session = api.post(
        "/sessions", {"project_id": agent_session.project_id, "axes": {"work_mode": "dance"}}
    )
    assert field_error(session) == ["work_mode"]


def test_paths_and_methods_the_api_does_not_have_are_problems(api: Api) -> None:
    """They were Django's HTML 404 page and ninja's plain-text 405."""
    missing = api.get("/nothing/here")
    assert missing.status_code == 404
    assert missing["Content-Type"] == "application/problem+json"
    assert missing.json()["detail"] == "no API call GET /api/nothing/here; see /api/docs"
    wrong = api.client.delete("/api/projects", HTTP_AUTHORIZATION=f"Bearer {api.secret}")
    assert wrong.status_code == 405
    assert wrong.json()["code"] == "method-not-allowed"
    assert "GET" in wrong["Allow"]


def test_a_body_that_is_not_json_is_a_bad_request(api: Api) -> None:
    response = api.client.post(
        "/api/sessions",
        "{not json",
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {api.secret}",
    )
    assert response.status_code == 400
    assert response.json()["code"] == "bad-request"
    assert "not valid JSON" in response.json()["detail"]


def test_an_unexpected_error_is_a_logged_problem(
    api: Api, project: Project, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def explode(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("boom")

    monkeypatch.setattr("api_app.operations.projects.role_of", explode)
    with caplog.at_level("ERROR", logger="sf.api"):
        response = api.get("/projects")
    assert response.status_code == 500
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == "internal"
    assert "boom" not in response.json()["detail"]  # the log has it, not the client
    assert "boom" in caplog.text


def test_the_document_says_how_errors_and_events_look(client: Client) -> None:
    """Errors were documented as application/json; 401 nowhere; the stream untyped."""
    document = openapi_document()
    for path, item in document["paths"].items():
        for method, operation in item.items():
            responses = {int(code): value for code, value in operation["responses"].items()}
            assert 401 in responses, (method, path)
            for code, response in responses.items():
                if code >= 400:
                    assert list(response["content"]) == ["application/problem+json"]
    stream = document["paths"]["/api/sessions/{session_id}/events"]["get"]["responses"][200]
    data = stream["content"]["text/event-stream"]["schema"]["properties"]["data"]
    assert data["contentSchema"] == {"$ref": "#/components/schemas/HeadlessEvent"}
    assert "ResultEvent" in document["components"]["schemas"]
