"""The board and the session page warn about a project's invalid skills; the skill
page links the units that used it."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse

from agents_app.models import AgentSession
from skills_app.models import SkillUse, SkillUseKind
from skills_app.selectors import skill_of
from skills_app.sync import project_skills_sync
from skills_app.tests.helpers import write_skill
from tasks_app.models import Unit
from tasks_app.tests.conftest import make_plan, task_data

pytestmark = pytest.mark.django_db


def _broken(session: AgentSession) -> None:
    repo = Path(session.project.repo_path)
    write_skill(repo, "fine")
    write_skill(repo, "broken", extra="colour: blue\n")
    project_skills_sync(session.project)


def test_the_board_names_invalid_skills_and_links_the_skills_page(
    logged_in_client: Client, agent_session: AgentSession
) -> None:
    board = f"{reverse('task-board')}?session={agent_session.pk}"
    assert "data-invalid-skills" not in logged_in_client.get(board).content.decode()
    _broken(agent_session)
    html = logged_in_client.get(board).content.decode()
    notice = html.split("data-invalid-skills>")[1].split("</p>")[0]
    assert "<strong>broken</strong>" in notice
    assert "fine" not in notice
    assert reverse("project-skills", args=[agent_session.project_id]) in notice


def test_the_session_page_plans_slot_names_invalid_skills(
    logged_in_client: Client, agent_session: AgentSession
) -> None:
    _broken(agent_session)
    html = logged_in_client.get(reverse("session-plans", args=[agent_session.pk])).content
    assert b"data-invalid-skills" in html
    assert b"<strong>broken</strong>" in html


def test_a_use_by_a_unit_links_the_unit(
    logged_in_client: Client, agent_session: AgentSession
) -> None:
    _broken(agent_session)
    task = make_plan(agent_session, task_data("api")).tasks.get()
    unit = Unit.objects.create(task=task, attempt=1, model="openai/gpt")
    skill = skill_of(agent_session.project, "fine")
    assert skill is not None
    SkillUse.objects.create(
        skill=skill, session=agent_session, unit=unit, kind=SkillUseKind.LOAD, by_model=True
    )
    url = reverse("skill-detail", args=[agent_session.project_id, "fine"])
    html = logged_in_client.get(url).content.decode()
    assert f'href="{reverse("unit-detail", args=[unit.pk])}"' in html
    assert "<code>api</code> unit 1" in html
