"""scripts/run.sh's demo waits for the first person to open the dashboard, and the
dashboard then says where it is (dashboard_app.run_demo)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from agents_app.models import ProjectMembership, Role
from agents_app.services import project_create, session_create
from conftest import make_git_repo
from dashboard_app.run_demo import STARTED, WAITING
from tasks_app.tests.conftest import make_plan, task_data

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo_dir(settings: Any, tmp_path: Path) -> Path:
    """SF's data directory with run.sh's marker: the demo waits for a person."""
    settings.SF_DATA_DIR = tmp_path / "data"
    folder = settings.SF_DATA_DIR / "demo"
    folder.mkdir(parents=True)
    (folder / WAITING).write_text("2026-11-28T15:00:00Z")
    return folder


def card(client: Client) -> str:
    html = client.get(reverse("dashboard")).content.decode()
    start = html.index('id="run-demo"')
    return html[start : html.index("</section>", start)]


def test_the_first_dashboard_opened_starts_the_demo_and_says_so(
    demo_dir: Path, logged_in_client: Client
) -> None:
    assert 'data-run-demo="starting"' in card(logged_in_client)
    assert not (demo_dir / WAITING).exists()  # run.sh's wait is over: it starts the demo
    assert (demo_dir / STARTED).read_text()  # when
    assert 'data-run-demo="starting"' in card(logged_in_client)  # once: nothing to take now


def test_the_card_follows_the_demo_session_and_links_its_unit(
    demo_dir: Path, logged_in_client: Client, user: User
) -> None:
    card(logged_in_client)  # opened: started
    repo = make_git_repo(demo_dir / "greeter")
    project = project_create(name="greeter", repo_path=str(repo))  # as headless registers it
    ProjectMembership.objects.create(project=project, user=user, role=Role.VIEWER)
    session = session_create(project=project, title="add a farewell function")
    html = card(logged_in_client)
    assert 'data-run-demo="active"' in html
    assert reverse("session-detail", args=[session.pk]) in html
    assert "planning: the plan's tasks appear here" in html
    plan = make_plan(session, task_data("farewell"))
    html = card(logged_in_client)
    assert 'data-run-demo-task="farewell"' in html
    assert plan.tasks.get().status in html


def test_no_card_when_run_sh_started_no_demo(
    settings: Any, tmp_path: Path, logged_in_client: Client
) -> None:
    settings.SF_DATA_DIR = tmp_path / "data"
    html = logged_in_client.get(reverse("dashboard")).content.decode()
    assert '<section class="card" id="run-demo" hidden>' in html
