"""Tokens, listings and CLI input (issue 28, A4, A5 and the CLI findings).

Each test here failed on the main of 2026-11-28 (55a698e): a token asked for a project
its person cannot see was made unrestricted (it saw every project of theirs); ``sf
skills sync --project 99999 --as USER`` listed every project's name; ``sf metrics
--since 2026-02-30`` was a traceback; ``sf headless --answers /etc/shadow`` and a plan
file named by mistake printed the file's lines in their errors.
"""

from __future__ import annotations

import os
from html import unescape
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client

from agents_app.models import Project
from agents_app.services import project_create
from api_app.models import ApiToken
from conftest import grant, make_git_repo
from tests.cli import run_sf

pytestmark = pytest.mark.django_db

SECRET_LINE = "root:$6$saltsalt$c2VjcmV0aGFzaA:20228:0:99999:7:::"


@pytest.fixture
def hidden(tmp_path: Path) -> Project:
    """A project ``ada`` (``user``) is no member of."""
    return project_create(name="hidden-b", repo_path=str(make_git_repo(tmp_path / "b")))


def test_a_token_for_a_project_the_person_cannot_see_is_refused_not_unscoped(
    logged_in_client: Client, user: User, project: Project, hidden: Project
) -> None:
    response = logged_in_client.post(
        "/profile/tokens/", {"name": "ci", "projects": [str(hidden.pk)]}
    )
    page = unescape(response.content.decode())
    assert response.status_code == 403
    assert f"not allowed to make a token for project '{hidden.pk}'" in page
    assert "it needs the viewer role" in page
    assert "hidden-b" not in page
    assert not ApiToken.objects.exists()


def test_a_token_whose_only_project_is_deleted_is_revoked_not_unscoped(
    logged_in_client: Client, user: User, project: Project, hidden: Project
) -> None:
    grant(user, hidden, "viewer")
    logged_in_client.post("/profile/tokens/", {"name": "b only", "projects": [str(hidden.pk)]})
    logged_in_client.post("/profile/tokens/", {"name": "both", "projects": [project.pk, hidden.pk]})
    hidden.delete()
    assert ApiToken.objects.get(name="b only").revoked_at is not None
    assert ApiToken.objects.get(name="both").revoked_at is None


def test_an_unknown_project_lists_only_the_projects_the_person_may_view(
    user: User, project: Project, hidden: Project
) -> None:
    for args in (
        ("skills", "sync", "--project", "99999", "--as", "ada"),
        ("skills", "list", "--project", "99999", "--as", "ada"),
        ("skills", "proposals", "--project", "99999", "--as", "ada"),
    ):
        code, _, err = run_sf(*args)
        assert code == 2, args
        assert "no project '99999'; projects you may view: sample" in err, err
        assert "hidden-b" not in err


def test_sf_metrics_as_a_person_counts_only_their_projects(
    user: User, project: Project, hidden: Project
) -> None:
    code, out, _ = run_sf("metrics", "--as", "ada", "--output-format", "json")
    assert code == 0
    assert "hidden-b" not in out
    assert run_sf("metrics", "--as", "ada", "--project", "hidden-b")[0] == 1


@pytest.mark.parametrize("day", ["2026-02-30", "2026-13-01", "yesterday"])
def test_sf_metrics_with_an_impossible_day_is_a_one_line_error(day: str) -> None:
    code, _, err = run_sf("metrics", "--since", day)
    assert code == 2
    assert err.startswith(f"error: --since '{day}' is not a day (YYYY-MM-DD)")
    assert err.count("\n") == 1


def secret_file(tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    path.write_text(f"{SECRET_LINE}\ndaemon:*:20228:0:99999:7:::\n")
    os.chmod(path, 0o600)
    return path


@pytest.mark.parametrize("name", ["shadow", "shadow.yaml"])
def test_sf_headless_answers_names_the_file_and_the_problem_never_its_lines(
    tmp_path: Path, project: Project, name: str
) -> None:
    path = secret_file(tmp_path, name)
    code, _, err = run_sf(
        "headless", "--project", project.repo_path, "--intent", "x", "--answers", str(path)
    )
    assert code == 2
    assert f"--answers {path}: an unknown key at the top level" in err
    assert "root:" not in err
    assert "daemon" not in err


def test_a_plan_file_named_by_mistake_is_not_printed_back(tmp_path: Path, project: Project) -> None:
    path = secret_file(tmp_path, "shadow.yaml")
    code, _, err = run_sf("headless", "--project", project.repo_path, "--plan-file", str(path))
    assert code == 2
    assert f"--plan-file {path}" in err
    assert "(a key): Extra inputs are not permitted" in err
    assert "root:" not in err
    assert "daemon" not in err
