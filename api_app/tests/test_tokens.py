from __future__ import annotations

import hashlib
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from agents_app.models import AgentSession, Project
from agents_app.services import project_create
from api_app.models import ApiToken
from api_app.tests.conftest import api_for
from api_app.tokens import token_revoke
from conftest import grant, make_git_repo

pytestmark = pytest.mark.django_db


def test_the_profile_page_shows_a_new_token_once_and_stores_only_its_hash(
    logged_in_client: Client, user: User
) -> None:
    page = logged_in_client.post(reverse("api-tokens"), {"name": "ci"}).content.decode()
    token = ApiToken.objects.get(user=user)
    secret = page.split("<code data-token>")[1].split("</code>")[0]
    assert secret.startswith("sf_")
    assert token.token_hash == hashlib.sha256(secret.encode()).hexdigest()
    assert secret not in str(ApiToken.objects.values().get())
    again = logged_in_client.get(reverse("api-tokens")).content.decode()
    assert secret not in again
    assert token.prefix in again


def test_a_revoked_token_is_refused_with_401(
    client: Client, user: User, logged_in_client: Client
) -> None:
    api = api_for(client, user)
    assert api.get("/projects").status_code == 200
    token = ApiToken.objects.get(user=user)
    logged_in_client.post(reverse("api-token-revoke", args=[token.pk]))
    response = api.get("/projects")
    assert response.status_code == 401
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == "unauthenticated"
    token.refresh_from_db()
    assert token.revoked_at is not None


def test_no_token_or_a_wrong_one_is_401(client: Client) -> None:
    assert client.get("/api/projects").status_code == 401
    response = client.get("/api/projects", HTTP_AUTHORIZATION="Bearer sf_nope")
    assert response.status_code == 401
    assert response.json()["type"] == "/api/problems/unauthenticated"


def test_a_person_cannot_revoke_another_persons_token(
    client: Client, user: User, staff_user: User
) -> None:
    api_for(client, user)
    with pytest.raises(Exception, match="no token"):
        token_revoke(user=staff_user, token_id=ApiToken.objects.get().pk)


def test_a_project_restricted_token_sees_only_its_projects(
    client: Client, user: User, project: Project, tmp_path: object, agent_session: AgentSession
) -> None:
    other = project_create(name="other", repo_path=str(make_git_repo(tmp_path / "o")))  # type: ignore[operator]
    grant(user, other, "admin")
    api = api_for(client, user, projects=[other])
    assert [p["name"] for p in api.get("/projects").json()] == ["other"]
    assert api.get(f"/projects/{project.pk}").status_code == 404
    assert api.get(f"/sessions/{agent_session.pk}").status_code == 404
    everywhere = api_for(client, user)
    assert [p["name"] for p in everywhere.get("/projects").json()] == ["other", "sample"]


def test_last_used_is_written_at_most_once_a_minute(client: Client, user: User) -> None:
    api = api_for(client, user)
    assert api.get("/projects").status_code == 200
    first = ApiToken.objects.get(user=user).last_used_at
    assert first is not None
    assert api.get("/projects").status_code == 200
    assert ApiToken.objects.get(user=user).last_used_at == first  # no write per call
    ApiToken.objects.filter(user=user).update(last_used_at=first - timedelta(minutes=2))
    assert api.get("/projects").status_code == 200
    assert ApiToken.objects.get(user=user).last_used_at > first - timedelta(minutes=1)
