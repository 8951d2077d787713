"""Registering a repository (issue 28, A1): its own server-level permission, the demo
grants nothing elsewhere, one project per resolved path, symlinks checked at each use.

Each test here failed on the main of 2026-11-28 (55a698e): an admin of any project —
or anyone who pressed **Replay the demo** — registered any repository under the roots,
as often as they liked under different spellings, and the raw string was stored.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import Permission, User
from django.db import IntegrityError, transaction
from django.test import Client
from django.urls import reverse

from agents_app.access import Action, may, role_of
from agents_app.doctor_checks import projects_check
from agents_app.models import Project, ProjectMembership, Role
from agents_app.services import project_create
from api_app.tokens import token_create
from conftest import make_git_repo
from sf_core.actors import Actor
from sf_core.errors import SfError
from tasks_app.features.doctor import git_checks as doctor_git
from tests.cli import run_sf
from tests.upgrade.migrations import agents_app_before
from tests.upgrade.migrations.agents_app_before import __path__ as migrations_path

pytestmark = pytest.mark.django_db

REFUSAL = "not allowed to register a repository: it needs the register-repository permission"


@pytest.fixture
def roots(settings: Any, tmp_path: Path) -> Path:
    settings.SF_REPO_ROOTS = [str(tmp_path.resolve())]
    return tmp_path.resolve()


@pytest.fixture
def bob(project: Project) -> User:
    """The admin of ``project`` (a staff member), without the register permission."""
    bob = User.objects.create(username="bob", is_staff=True)
    ProjectMembership.objects.create(project=project, user=bob, role=Role.ADMIN)
    return bob


def register_web(client: Client, repo: Path, name: str = "another") -> Any:
    data = {"name": name, "repo_path": str(repo), "base_branch": "main", "repair_policy": "ask"}
    return client.post(reverse("project-list"), data)


def test_a_project_admin_without_the_permission_registers_nothing_anywhere(
    roots: Path, bob: User, client: Client
) -> None:
    repo = make_git_repo(roots / "another")
    client.force_login(bob)
    response = register_web(client, repo)
    assert response.status_code == 403
    assert REFUSAL in response.content.decode().lower()
    code, _, err = run_sf("project", "create", "another", str(repo), "--as", "bob")
    assert code == 2
    assert REFUSAL in err
    secret = token_create(user=bob, name="t").secret
    api = client.post(
        "/api/projects",
        {"name": "another", "repo_path": str(repo)},
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {secret}",
    )
    assert api.status_code == 403
    assert REFUSAL in api.content.decode()
    assert not Project.objects.filter(name="another").exists()


def test_the_permission_a_superuser_grants_lets_a_person_register(
    roots: Path, bob: User, client: Client
) -> None:
    bob.user_permissions.add(Permission.objects.get(codename="register_repository"))
    client.force_login(User.objects.get(pk=bob.pk))
    assert register_web(client, make_git_repo(roots / "another")).status_code == 302
    registered = Project.objects.get(name="another")
    assert ProjectMembership.objects.get(project=registered, user=bob).role == Role.ADMIN


def test_the_demo_makes_its_caller_admin_of_the_demo_and_of_nothing_else(
    roots: Path, client: Client, settings: Any, tmp_path: Path
) -> None:
    settings.SF_DATA_DIR = tmp_path / "data"
    stranger = User.objects.create(username="stranger")
    client.force_login(stranger)
    assert client.post(reverse("demo-replay")).status_code in (200, 302)
    demo = Project.objects.get(memberships__user=stranger)
    assert demo.demo
    assert role_of(stranger, demo) == Role.ADMIN
    assert role_of(stranger, None) is None  # "admin of some project" it is not
    assert not may(stranger, None, Action.REGISTER_REPOSITORY)
    response = register_web(client, make_git_repo(roots / "victim"))
    assert response.status_code == 403
    assert REFUSAL in response.content.decode().lower()


@pytest.mark.parametrize("spelling", ["{x}/", "{x}/.", "{y}/../x", "{link}"])
def test_a_repository_is_registered_once_under_any_spelling(roots: Path, spelling: str) -> None:
    real = make_git_repo(roots / "x")
    (roots / "y").mkdir()
    (roots / "link").symlink_to(real)
    first = project_create(name="first", repo_path=str(real))
    path = spelling.format(x=real, y=roots / "y", link=roots / "link")
    with pytest.raises(SfError, match=r"already registered as project 'first'"):
        project_create(name="second", repo_path=path)
    assert list(Project.objects.values_list("name", flat=True)) == [first.name]


def test_the_path_is_stored_resolved_and_unique_in_the_database(roots: Path) -> None:
    real = make_git_repo(roots / "x")
    (roots / "link").symlink_to(real)
    project = project_create(name="via link", repo_path=f"{roots}/link/.")
    assert project.repo_path == str(real)
    with pytest.raises(IntegrityError), transaction.atomic():
        Project.objects.create(name="raw", repo_path=str(real))


def test_a_symlink_swapped_in_after_registration_is_refused_at_use(roots: Path) -> None:
    real = make_git_repo(roots / "x")
    elsewhere = make_git_repo(roots / "elsewhere")
    project = project_create(name="x", repo_path=str(real))
    shutil.rmtree(real)
    real.symlink_to(elsewhere)
    findings = [f for f in projects_check() if "x" in f.message]
    assert findings
    assert "now resolves to" in findings[0].message
    with pytest.raises(SfError, match="now resolves to"):
        project.repository()
    # The doctor's fixes do not follow the link: no branch of the other repository goes.
    subprocess.run(["git", "branch", "sf/p1/k/1"], cwd=elsewhere, check=True)
    doctor_git.worktrees_fix(Actor.system("test"))
    assert (
        "sf/p1/k/1"
        in subprocess.run(
            ["git", "branch", "--list", "sf/*"], cwd=elsewhere, capture_output=True, text=True
        ).stdout
    )


def test_the_migration_resolves_stored_paths_and_names_duplicates(roots: Path) -> None:
    from importlib import import_module

    from django.apps import apps

    # It ran on every database upgraded to it; agents_app's one migration now replaces it
    # (tests/test_migrations_standalone.py), and the file is kept with the old chain.
    migration = import_module(f"{agents_app_before.__name__}.0017_project_registration")
    assert Path(migrations_path[0], "0017_project_registration.py").is_file()
    real = make_git_repo(roots / "x")
    Project.objects.create(name="plain", repo_path=f"{real}/.")
    migration.resolve_paths(apps, None)
    assert Project.objects.get(name="plain").repo_path == str(real)
    Project.objects.create(name="again", repo_path=f"{real}/")
    with pytest.raises(migration.DuplicateRepositories, match=r"'plain'.*'again'"):
        migration.resolve_paths(apps, None)
