"""The doctor's repairs act across projects (issue 28, A2): each surface — the page's
GET and POST, ``sf doctor --as``, ``/doctor`` in the command bar — shows only the
findings of projects the person may view, and runs the repairs only when the person
holds REPAIR (admin) on each project they touch.

Each test here failed on the main of 2026-11-28 (55a698e): the page checked
``is_staff`` only, the CLI and the command bar fixed every project's findings, and every
surface showed every project's findings.
"""

from __future__ import annotations

import os
from html import unescape
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from agents_app.models import AgentSession, ProjectMembership, RepairRecord, Role
from agents_app.services import project_create, session_create
from conftest import make_git_repo
from tests.cli import run_sf

pytestmark = pytest.mark.django_db

REFUSAL = "not allowed to run the doctor's repairs on a project you are not a member of"


def lock_in(repo: Path) -> Path:
    """A git lock a killed git left long ago: a fixable ``locks.dead`` finding."""
    lock = repo / ".git" / "index.lock"
    lock.write_text("")
    os.utime(lock, (1_000_000_000, 1_000_000_000))
    return lock


@pytest.fixture
def theirs(tmp_path: Path) -> Path:
    """Project B, nobody's here but its own, with a stale lock in its repository."""
    repo = make_git_repo(tmp_path / "theirs")
    project_create(name="theirs", repo_path=str(repo))
    return lock_in(repo)


@pytest.fixture
def grace(project: Any, staff_user: User) -> User:
    """A staff member who is an admin of ``project`` (A) and nothing of B."""
    ProjectMembership.objects.create(project=project, user=staff_user, role=Role.ADMIN)
    return staff_user


def test_the_page_shows_a_staff_member_only_the_findings_of_their_projects(
    client: Client, grace: User, stale_lock: Path, theirs: Path
) -> None:
    client.force_login(grace)
    page = client.get("/doctor/").content.decode()
    assert str(stale_lock) in page
    assert str(theirs) not in page


def test_the_page_refuses_a_fix_that_touches_a_project_the_person_may_not_repair(
    client: Client, grace: User, stale_lock: Path, theirs: Path
) -> None:
    client.force_login(grace)
    response = client.post("/doctor/")
    assert response.status_code == 403
    assert REFUSAL in unescape(response.content.decode()).lower()
    assert "needs the admin role" in response.content.decode()
    assert theirs.exists()
    assert stale_lock.exists(), "refused: nothing repaired"
    assert not RepairRecord.objects.exists()


def test_the_page_refuses_a_viewer_the_repairs_of_their_own_project(
    client: Client, grace: User, project: Any, stale_lock: Path
) -> None:
    ProjectMembership.objects.filter(user=grace).update(role=Role.VIEWER)
    client.force_login(grace)
    response = client.post("/doctor/")
    assert response.status_code == 403
    assert "needs the admin role (you are viewer)" in response.content.decode()
    assert stale_lock.exists()


def test_sf_doctor_as_a_person_sees_and_fixes_only_what_they_may(
    grace: User, stale_lock: Path, theirs: Path
) -> None:
    code, out, _ = run_sf("doctor", "--as", "grace")
    assert str(stale_lock) in out
    assert str(theirs) not in out
    code, _, err = run_sf("doctor", "--fix", "--as", "grace")
    assert code == 2
    assert REFUSAL in err
    assert theirs.exists()
    assert stale_lock.exists()
    theirs.unlink()  # B healthy now: A's own fix is allowed
    assert run_sf("doctor", "--fix", "--as", "grace")[0] == 0
    assert not stale_lock.exists()


def test_doctor_fix_in_the_command_bar_does_not_reach_another_project(
    logged_in_client: Client, project: Any, user: User, stale_lock: Path, theirs: Path
) -> None:
    session: AgentSession = session_create(project=project, created_by=user, title="s")
    url = f"/sessions/{session.pk}/command"
    shown = logged_in_client.post(url, {"text": "/doctor"}, HTTP_HX_REQUEST="true")
    assert str(stale_lock) in shown.content.decode()
    assert str(theirs) not in shown.content.decode()
    response = logged_in_client.post(url, {"text": "/doctor fix"}, HTTP_HX_REQUEST="true")
    assert REFUSAL in unescape(response.content.decode()).lower()
    assert theirs.exists()
    assert stale_lock.exists()
