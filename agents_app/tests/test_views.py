"""Project and session pages, the command bar and the axis controls."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from agents_app.models import AgentSession, ModeTransition, Project
from conftest import make_git_repo

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}


def test_pages_require_login(client: Client, agent_session: AgentSession) -> None:
    for url in (
        reverse("project-list"),
        reverse("project-detail", args=[agent_session.project_id]),
        reverse("session-detail", args=[agent_session.pk]),
    ):
        assert client.get(url).status_code == 302
    response = client.post(
        reverse("session-command", args=[agent_session.pk]), {"text": "/autonomous"}
    )
    assert response.status_code == 302
    agent_session.refresh_from_db()
    assert agent_session.run_control == "manual"


def test_creating_a_project_and_a_session(
    logged_in_client: Client, tmp_path: Path, registrar: User
) -> None:
    repo = make_git_repo(tmp_path / "web")  # git_repo is the project fixture's: once only
    response = logged_in_client.post(
        reverse("project-list"),
        {"name": "web", "repo_path": str(repo), "base_branch": "main", "repair_policy": "auto"},
    )
    project = Project.objects.get(name="web")
    assert response["Location"] == reverse("project-detail", args=[project.pk])
    assert project.parsed_policy.repair_policy == "auto"
    response = logged_in_client.post(
        reverse("project-detail", args=[project.pk]),
        {
            "title": "t",
            "work_mode": "plan",
            "run_control": "manual",
            "permission_profile": "normal",
            "model_mode": "deep",
        },
    )
    session = AgentSession.objects.get(project=project)
    assert response["Location"] == reverse("session-detail", args=[session.pk])
    assert session.axes.as_dict()["model_mode"] == "deep"


def test_a_bad_project_shows_the_error_and_writes_nothing(
    logged_in_client: Client, tmp_path: Path, registrar: User
) -> None:
    response = logged_in_client.post(
        reverse("project-list"),
        {
            "name": "x",
            "repo_path": str(tmp_path / "nope"),
            "base_branch": "main",
            "repair_policy": "ask",
        },
    )
    assert response.status_code == 400
    assert b"does not exist or is not a directory" in response.content
    assert not Project.objects.filter(name="x").exists()


def test_the_session_page_shows_badge_command_bar_timeline(
    logged_in_client: Client, agent_session: AgentSession
) -> None:
    html = logged_in_client.get(reverse("session-detail", args=[agent_session.pk])).content.decode()
    assert 'id="mode-badge"' in html
    assert "SF chat | manual | normal | smart" in html
    assert 'data-compact="[C][M][N][S]"' in html
    assert 'id="command-bar"' in html
    assert 'id="transition-timeline"' in html
    assert f'ws-connect="/ws/sessions/{agent_session.pk}/"' in html
    assert "agents_app/session.js" in html


def test_the_command_bar_applies_a_command_inline(
    logged_in_client: Client, agent_session: AgentSession
) -> None:
    response = logged_in_client.post(
        reverse("session-command", args=[agent_session.pk]),
        {"text": "/mode build --autonomous"},
        **HTMX,
    )
    assert response.status_code == 200
    assert 'id="command-result"' in response.content.decode()
    assert "SF build | autonomous | normal | smart" in response.content.decode()
    agent_session.refresh_from_db()
    assert agent_session.run_control == "autonomous"
    transition = ModeTransition.objects.get()
    assert transition.actor_label == "ada"


def test_a_bad_command_is_shown_inline_and_changes_nothing(
    logged_in_client: Client, agent_session: AgentSession
) -> None:
    response = logged_in_client.post(
        reverse("session-command", args=[agent_session.pk]), {"text": "/sf mode build"}, **HTMX
    )
    html = response.content.decode()
    assert 'data-error="true"' in html
    assert "/sf is not a command root" in html
    assert ModeTransition.objects.count() == 0


def test_a_bad_command_without_htmx_is_a_400(
    logged_in_client: Client, agent_session: AgentSession
) -> None:
    response = logged_in_client.post(
        reverse("session-command", args=[agent_session.pk]), {"text": "/control fast"}
    )
    assert response.status_code == 400
    assert b"unknown value 'fast' for /control" in response.content


def test_the_axis_controls_send_the_equivalent_command(
    logged_in_client: Client, agent_session: AgentSession
) -> None:
    logged_in_client.post(
        reverse("session-axis", args=[agent_session.pk]),
        {"axis": "permission_profile", "value": "trusted"},
        **HTMX,
    )
    agent_session.refresh_from_db()
    assert agent_session.permission_profile == "trusted"
    assert "/permission-profile trusted" in ModeTransition.objects.get().reason
    response = logged_in_client.post(
        reverse("session-axis", args=[agent_session.pk]),
        {"axis": "surface", "value": "tui"},
        **HTMX,
    )
    assert "unknown axis &#x27;surface&#x27;" in response.content.decode()


def test_pending_steering_can_be_cancelled(
    logged_in_client: Client, agent_session: AgentSession
) -> None:
    logged_in_client.post(
        reverse("session-command", args=[agent_session.pk]),
        {"text": "/steer mode review next-milestone"},
        **HTMX,
    )
    pending = ModeTransition.objects.get()
    html = logged_in_client.get(reverse("session-detail", args=[agent_session.pk])).content.decode()
    assert f'data-transition="{pending.pk}" data-status="pending"' in html
    logged_in_client.post(reverse("transition-action", args=[pending.pk, "cancel"]), **HTMX)
    pending.refresh_from_db()
    assert pending.status == "cancelled"
    assert (
        logged_in_client.post(
            reverse("transition-action", args=[pending.pk, "explode"])
        ).status_code
        == 404
    )
