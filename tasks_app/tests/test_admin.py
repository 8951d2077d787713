"""The admin shows plan and task state but leaves its changes to the logged services."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from agents_app.models import AgentSession
from tasks_app.tests.conftest import make_plan, task_data

pytestmark = pytest.mark.django_db


def test_plan_and_task_state_are_read_only(
    admin_client: Client, agent_session: AgentSession
) -> None:
    plan = make_plan(agent_session, task_data("api"))
    html = admin_client.get(reverse("admin:tasks_app_plan_change", args=[plan.pk])).content.decode()
    for field in ("status", "status_reason", "accepted_at", "accepted_by"):
        assert f'name="{field}"' not in html, f"plan {field} is editable"
        assert f"field-{field}" in html
    task = plan.tasks.get()
    html = admin_client.get(reverse("admin:tasks_app_task_change", args=[task.pk])).content.decode()
    for field in ("status", "status_reason", "hold_reason", "retry_count"):
        assert f'name="{field}"' not in html, f"task {field} is editable"
