"""The follow-up form of the unit page and of the board (``surfaces.followup_views``)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from agents_app.models import AgentSession
from conftest import grant
from sf_core.actors import Actor
from tasks_app.lifecycle import task_transition
from tasks_app.models import FollowUp, Task, Unit
from tasks_app.services import plan_accept
from tasks_app.tests.conftest import make_plan, task_data

pytestmark = pytest.mark.django_db
WORDS = "Keep the old flag working."
HTMX = {"HX-Request": "true"}


@pytest.fixture
def unit(agent_session: AgentSession) -> Unit:
    task = make_plan(agent_session, task_data("a")).tasks.get()
    task_transition(task=task, to="in_progress", reason="unit started", actor=Actor.system("w"))
    return Unit.objects.create(task=task, attempt=1)


def test_the_unit_page_offers_the_form_to_an_operator_only(
    logged_in_client: Client, user: User, unit: Unit
) -> None:
    project = unit.task.plan.session.project
    grant(user, project, "viewer")
    page = logged_in_client.get(f"/units/{unit.pk}/").content.decode()
    assert 'id="unit-followups"' in page
    assert 'id="followup-form"' not in page
    grant(user, project, "operator")
    page = logged_in_client.get(f"/units/{unit.pk}/").content.decode()
    assert 'id="followup-form"' in page
    assert f'name="unit" value="{unit.pk}"' in page  # running: to the unit


def test_a_post_from_the_unit_page_answers_with_its_section(
    logged_in_client: Client, user: User, unit: Unit
) -> None:
    grant(user, unit.task.plan.session.project, "viewer")
    path = f"/tasks/{unit.task_id}/followups"
    refused = logged_in_client.post(path, {"text": WORDS, "unit": unit.pk}, headers=HTMX)
    assert refused.status_code == 200
    assert "needs the operator role (you are viewer)" in refused.content.decode()
    grant(user, unit.task.plan.session.project, "operator")
    empty = logged_in_client.post(
        path, {"text": "", "unit": unit.pk}, headers=HTMX
    ).content.decode()
    assert "the follow-up message is empty" in empty
    sent = logged_in_client.post(
        path, {"text": WORDS, "unit": unit.pk}, headers=HTMX
    ).content.decode()
    assert "Sent: unit 1 reads it before its next step" in sent
    assert WORDS in sent
    assert "waiting for the unit's next step" in sent
    other = make_plan(unit.task.plan.session, task_data("b")).tasks.get()
    wrong = logged_in_client.post(
        f"/tasks/{other.pk}/followups", {"text": WORDS, "unit": unit.pk}, headers=HTMX
    )
    assert f"unit {unit.pk} is not an attempt of task b" in wrong.content.decode()
    assert FollowUp.objects.get().unit == unit


def test_a_post_from_the_board_answers_with_the_board(
    logged_in_client: Client, user: User, agent_session: AgentSession
) -> None:
    grant(user, agent_session.project, "operator")
    plan = make_plan(agent_session, task_data("a"))
    plan_accept(plan=plan, actor=Actor.of(user), autonomous=False, start=False)
    task = plan.tasks.get()
    board = logged_in_client.get(f"/tasks/?session={agent_session.pk}").content.decode()
    assert f'data-followup-form="{task.key}"' in board
    answer = logged_in_client.post(
        f"/tasks/{task.pk}/followups?session={agent_session.pk}",
        {"text": WORDS, "from": "board"},
        headers=HTMX,
    ).content.decode()
    assert 'id="task-board"' in answer
    assert "a: follow-up sent: attempt 1 starts with it in its brief" in answer
    Task.objects.filter(pk=task.pk).update(status="done")
    answer = logged_in_client.post(
        f"/tasks/{task.pk}/followups", {"text": WORDS, "from": "board"}, headers=HTMX
    ).content.decode()
    assert "task a is done, which is final" in answer


@pytest.mark.parametrize(
    ("task_status", "words"),
    [
        ("cancelled", "task a is cancelled, which is final"),
        ("failed", "Retry with this message"),
        ("paused", "Resume with this message"),
        ("retrying", "Send for the next attempt"),
    ],
)
def test_an_ended_units_page_offers_what_applies_to_its_task(
    logged_in_client: Client, user: User, unit: Unit, task_status: str, words: str
) -> None:
    """Loaded after the unit ended: never "to the running agent" (the form names no
    unit); what a message does to the task now, or that none can go."""
    grant(user, unit.task.plan.session.project, "operator")
    Unit.objects.filter(pk=unit.pk).update(status="cancelled")
    Task.objects.filter(pk=unit.task_id).update(status=task_status)
    page = logged_in_client.get(f"/units/{unit.pk}/").content.decode()
    assert "Send to the running agent" not in page
    assert 'name="unit"' not in page
    assert words in page
    assert ('id="followup-send"' in page) == (task_status != "cancelled")
