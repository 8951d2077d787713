from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from agents_app.models import AgentSession, ModeTransition
from agents_app.services import command_run
from sf_core.actors import Actor

pytestmark = pytest.mark.django_db


def test_sessions_and_transitions_are_listed(
    admin_client: Client, agent_session: AgentSession
) -> None:
    command_run(session=agent_session, text="/mode build", actor=Actor.system("t"))
    assert admin_client.get(reverse("admin:agents_app_agentsession_changelist")).status_code == 200
    page = admin_client.get(reverse("admin:agents_app_modetransition_changelist"))
    assert b"work_mode chat" in page.content


def test_transitions_are_read_only(admin_client: Client, agent_session: AgentSession) -> None:
    command_run(session=agent_session, text="/mode build", actor=Actor.system("t"))
    transition = ModeTransition.objects.get()
    url = reverse("admin:agents_app_modetransition_change", args=[transition.pk])
    page = admin_client.get(url)
    assert page.status_code == 200
    assert b'name="reason"' not in page.content  # shown, not editable
    admin_client.post(url, {"reason": "rewritten"})
    transition.refresh_from_db()
    assert transition.reason != "rewritten"
    assert admin_client.get(reverse("admin:agents_app_modetransition_add")).status_code == 403
    delete = reverse("admin:agents_app_modetransition_delete", args=[transition.pk])
    assert admin_client.post(delete, {"post": "yes"}).status_code == 403
    assert ModeTransition.objects.count() == 1


SESSION_STATE = [
    "status",
    "pause_cause",
    "pause_reason",
    "paused",
    "work_mode",
    "run_control",
    "permission_profile",
    "model_mode",
    "budget_alerts",
    "interrupt_requested",
    "step_requested",
    "driver",
    "finished_at",
    "provider_retry_at",
    "provider_outages",
]


def test_session_state_is_shown_but_not_editable(
    admin_client: Client, agent_session: AgentSession
) -> None:
    url = reverse("admin:agents_app_agentsession_change", args=[agent_session.pk])
    page = admin_client.get(url)
    assert page.status_code == 200
    html = page.content.decode()
    for field in SESSION_STATE:
        assert f'name="{field}"' not in html, f"{field} is editable in the admin"
        assert f"field-{field}" in html, f"{field} is not shown"
    assert 'name="title"' in html  # what nothing reads as a transition stays editable


def test_posting_the_change_form_cannot_change_status_or_budget_alerts(
    admin_client: Client, agent_session: AgentSession
) -> None:
    url = reverse("admin:agents_app_agentsession_change", args=[agent_session.pk])
    form = {
        "project": agent_session.project_id,
        "title": "renamed",
        "max_autonomous_continues": 50,
        "status": "stopped",
        "budget_alerts": "[50, 80]",
        "pause_cause": "person",
        "created_by": agent_session.created_by_id,
        "created_at_0": agent_session.created_at.strftime("%Y-%m-%d"),
        "created_at_1": agent_session.created_at.strftime("%H:%M:%S"),
        "transitions-TOTAL_FORMS": 0,
        "transitions-INITIAL_FORMS": 0,
    }
    response = admin_client.post(url, form)
    assert response.status_code == 302, "the form was refused, so this proves nothing"
    agent_session.refresh_from_db()
    assert agent_session.title == "renamed"
    assert agent_session.status != "stopped"
    assert agent_session.budget_alerts == []
    assert agent_session.pause_cause == ""


def test_the_admin_wears_the_apps_colours(admin_client: Client) -> None:
    html = admin_client.get(reverse("admin:index")).content.decode()
    assert "SF admin" in html
    assert "--header-bg: #171a21" in html
    assert "sf/favicon.svg" in html
    assert 'href="/"' in html  # back to the dashboard
