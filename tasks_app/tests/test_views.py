"""Plan review, Accept / Run autonomously, and the task board."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext, override_settings
from django.urls import reverse

from agents_app.models import AgentSession
from sf_core.actors import Actor
from tasks_app.lifecycle import task_transition
from tasks_app.models import Plan, PlanStatus, TaskRuntime
from tasks_app.services import plan_accept
from tasks_app.tests.conftest import make_plan, task_data

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}


def test_the_plan_page_shows_tasks_waves_and_the_two_choices(
    logged_in_client: Client, diamond_plan: Plan
) -> None:
    html = logged_in_client.get(reverse("plan-detail", args=[diamond_plan.pk])).content.decode()
    assert "<strong>R1</strong> a works" in html
    assert "<code>true</code>" in html
    assert "risk medium" in html
    assert "Wave 1: <code>a</code>" in html
    assert "Wave 2: <code>b</code>, <code>c</code>" in html
    assert 'id="run-autonomously"' in html
    assert 'name="permission_profile"' in html


@override_settings(SF_MODEL_SMART="openai/gpt-4o")  # the pre-flight wants a model
def test_run_autonomously_redirects_to_the_board(
    logged_in_client: Client, diamond_plan: Plan, plan_session: AgentSession
) -> None:
    response = logged_in_client.post(
        reverse("plan-accept", args=[diamond_plan.pk]),
        {"action": "autonomous", "permission_profile": "trusted"},
        **HTMX,
    )
    assert response.headers["HX-Redirect"] == f"/tasks/?session={plan_session.pk}"
    plan_session.refresh_from_db()
    assert (plan_session.work_mode, plan_session.run_control, plan_session.permission_profile) == (
        "build",
        "autonomous",
        "trusted",
    )
    diamond_plan.refresh_from_db()
    assert diamond_plan.accepted_by is not None
    assert diamond_plan.accepted_by.username == "ada"


def test_accepting_twice_shows_the_error_inline(
    logged_in_client: Client, diamond_plan: Plan
) -> None:
    plan_accept(plan=diamond_plan, actor=Actor.system("t"))
    response = logged_in_client.post(
        reverse("plan-accept", args=[diamond_plan.pk]), {"action": "accept"}, **HTMX
    )
    assert "only a proposed plan can be accepted" in response.content.decode()
    assert Plan.objects.get().status == PlanStatus.ACCEPTED


def test_the_board_shows_each_task_with_its_state(
    logged_in_client: Client, diamond_plan: Plan, plan_session: AgentSession
) -> None:
    plan_accept(plan=diamond_plan, actor=Actor.system("t"), autonomous=True)
    task_a = diamond_plan.tasks.get(key="a")
    task_transition(task=task_a, to="in_progress", reason="unit 1")
    TaskRuntime.objects.create(task=task_a, worker="w1@host", current_model="openai/x")
    html = logged_in_client.get(
        f"{reverse('task-board')}?session={plan_session.pk}"
    ).content.decode()
    assert 'data-task="a" data-status="in_progress"' in html
    assert "w1@host" in html
    assert "waiting for a to be done (now in_progress)" in html  # b and c wait for a
    assert "waiting for b to be done (now todo); c to be done (now todo)" in html  # d
    assert "0/3" in html
    assert "Overlapping intent claims: c and d both claim src/shared.py" in html
    assert 'ws-connect="/ws/tasks/?session=' in html


def test_the_board_filters_by_status(
    logged_in_client: Client, diamond_plan: Plan, plan_session: AgentSession
) -> None:
    plan_accept(plan=diamond_plan, actor=Actor.system("t"))
    task_transition(task=diamond_plan.tasks.get(key="a"), to="cancelled", reason="no")
    html = logged_in_client.get(
        f"/tasks/?session={plan_session.pk}&status=cancelled&status=bogus"
    ).content.decode()
    assert 'data-task="a"' in html
    assert 'data-task="b"' not in html


def board_queries(client: Client, session_id: int) -> int:
    with CaptureQueriesContext(connection) as queries:
        assert client.get(f"/tasks/?session={session_id}", **HTMX).status_code == 200
    return len(queries)


def test_the_board_takes_a_constant_number_of_queries(
    logged_in_client: Client, plan_session: AgentSession
) -> None:
    small = make_plan(
        plan_session, *(task_data(f"s{i}", depends_on=[f"s{i - 1}"] if i else []) for i in range(5))
    )
    plan_accept(plan=small, actor=Actor.system("t"))
    few = board_queries(logged_in_client, plan_session.pk)
    big_session = AgentSession.objects.create(project=plan_session.project, work_mode="plan")
    big = make_plan(
        big_session,
        *(task_data(f"b{i}", depends_on=[f"b{i - 1}"] if i else []) for i in range(120)),
    )
    plan_accept(plan=big, actor=Actor.system("t"))
    many = board_queries(logged_in_client, big_session.pk)
    assert few == many
    assert many <= 15


def test_the_session_page_loads_its_plans_from_the_tasks_app(
    logged_in_client: Client, diamond_plan: Plan, plan_session: AgentSession
) -> None:
    page = logged_in_client.get(reverse("session-detail", args=[plan_session.pk])).content.decode()
    assert f'hx-get="{reverse("session-plans", args=[plan_session.pk])}"' in page
    html = logged_in_client.get(
        reverse("session-plans", args=[plan_session.pk]), **HTMX
    ).content.decode()
    assert f'href="/plans/{diamond_plan.pk}/">Plan {diamond_plan.pk}</a>' in html
    assert f"/tasks/?session={plan_session.pk}" in html


def test_the_session_plans_need_a_login(client: Client, plan_session: AgentSession) -> None:
    assert client.get(reverse("session-plans", args=[plan_session.pk])).status_code == 302


def test_a_proposed_plan_whose_record_is_out_of_reach_shows_the_lint_as_stored(
    logged_in_client: Client, diamond_plan: Plan, settings: Any, tmp_path: Path
) -> None:
    """Record mode: the page lints against the record's base (agents_app.mirrors); a web
    host that cannot fetch it shows the findings stored when the plan was made."""
    settings.SF_RECORD_URL_PREFIXES = [f"file://{tmp_path}/"]
    settings.SF_DATA_DIR = tmp_path / "data"
    project = diamond_plan.session.project
    project.policy = {**project.policy, "record": {"url": f"file://{tmp_path}/gone.git"}}
    project.save()
    stored = {"task": "a", "level": "warning", "command": "true", "message": "as stored"}
    Plan.objects.filter(pk=diamond_plan.pk).update(lint=[stored])
    response = logged_in_client.get(reverse("plan-detail", args=[diamond_plan.pk]))
    assert response.status_code == 200
    assert "<code>true</code>: as stored" in response.content.decode()
