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
