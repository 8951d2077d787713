"""Access rules beyond the matrix: repository roots, the last admin, project names,
the admin's scoping, the log of refusals and the upgrade's backfill."""

from __future__ import annotations

import importlib
import logging
from pathlib import Path
from typing import Any

import pytest
from django.apps import apps
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from agents_app.access import AccessDenied, Action, require, role_of
from agents_app.models import AgentSession, Project, ProjectMembership
from agents_app.services import member_add, member_remove, member_set_role, project_create
from conftest import grant, make_git_repo, may_register
from sf_core.actors import Actor
from sf_core.errors import NotAllowed, SfError
from tests.cli import run_sf
from tests.upgrade.migrations import agents_app_before

pytestmark = pytest.mark.django_db


@pytest.fixture
def roots(settings: Any, tmp_path: Path, user: User) -> Path:
    root = tmp_path / "allowed"
    root.mkdir()
    settings.SF_REPO_ROOTS = [str(root.resolve())]
    may_register(user)  # the tests here judge the path, not the permission
    return root


def test_a_person_registers_only_under_the_allowed_roots(
    roots: Path, tmp_path: Path, user: User
) -> None:
    outside = make_git_repo(tmp_path / "outside")
    with pytest.raises(NotAllowed, match="outside the allowed repository roots"):
        project_create(name="o", repo_path=str(outside), created_by=user)
    project = project_create(name="i", repo_path=str(make_git_repo(roots / "in")), created_by=user)
    assert role_of(user, project) == "admin"  # its registrant is its admin
    assert list(Project.objects.values_list("name", flat=True)) == ["i"]


def test_a_symlink_under_a_root_is_judged_by_where_it_leads(
    roots: Path, tmp_path: Path, user: User
) -> None:
    outside = make_git_repo(tmp_path / "outside")
    (roots / "link").symlink_to(outside)
    with pytest.raises(NotAllowed, match=str(outside)):
        project_create(name="l", repo_path=str(roots / "link"), created_by=user)
    assert not Project.objects.exists()


def test_sfs_own_checkout_is_refused_to_everyone(settings: Any, user: User) -> None:
    settings.SF_REPO_ROOTS = ["/"]
    user = may_register(user)
    for created_by in (user, None):
        with pytest.raises(NotAllowed, match="SF's own checkout"):
            project_create(name="sf", repo_path=str(settings.BASE_DIR), created_by=created_by)
    assert not Project.objects.exists()


def test_the_web_refuses_a_repository_outside_the_roots(
    roots: Path, tmp_path: Path, logged_in_client: Client, project: Project
) -> None:
    response = logged_in_client.post(
        reverse("project-list"),
        {
            "name": "x",
            "repo_path": str(make_git_repo(tmp_path / "outside")),
            "base_branch": "main",
            "repair_policy": "ask",
        },
    )
    assert response.status_code == 400
    assert b"outside the allowed repository roots" in response.content
    assert not Project.objects.filter(name="x").exists()


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("x" * 300, "at most 200 characters (got 300)"),
        ("   ", "a project needs a name"),
        ("bad\x07name", "control characters"),
    ],
)
def test_a_bad_project_name_is_one_line_and_exit_2(git_repo: Path, name: str, message: str) -> None:
    code, _, err = run_sf("project", "create", name, str(git_repo))
    assert code == 2
    assert message in err
    assert err.count("\n") == 1
    assert not Project.objects.exists()


def test_the_last_admin_can_be_neither_removed_nor_demoted(project: Project, user: User) -> None:
    me = Actor.of(user)
    with pytest.raises(SfError, match="last admin"):
        member_remove(project=project, username="ada", actor=me)
    with pytest.raises(SfError, match="last admin"):
        member_set_role(project=project, username="ada", role="viewer", actor=me)
    assert role_of(user, project) == "admin"
    User.objects.create(username="bob")
    member_add(project=project, username="bob", role="admin", actor=me)
    member_set_role(project=project, username="ada", role="viewer", actor=me)  # bob remains
    assert role_of(user, project) == "viewer"


def test_the_members_page_is_for_admins_and_keeps_an_admin(
    logged_in_client: Client, project: Project, user: User
) -> None:
    url = reverse("project-members", args=[project.pk])
    response = logged_in_client.post(url, {"action": "remove", "username": "ada"})
    assert response.status_code == 400
    assert b"last admin" in response.content
    User.objects.create(username="bob")
    logged_in_client.post(url, {"action": "add", "username": "bob", "role": "operator"})
    assert ProjectMembership.objects.get(user__username="bob").role == "operator"
    grant(user, project, "approver")
    assert logged_in_client.get(url).status_code == 403


def test_refusals_are_logged(
    project: Project, caplog: pytest.LogCaptureFixture, django_user_model: Any
) -> None:
    bob = django_user_model.objects.create(username="bob")
    grant(bob, project, "viewer")
    with caplog.at_level(logging.WARNING, logger="sf.access"), pytest.raises(AccessDenied):
        require(bob, project, Action.ACCEPT_PLAN)
    record = caplog.records[-1]
    assert record.name == "sf.access"
    assert "user=bob" in record.getMessage()
    assert f"project={project.pk}" in record.getMessage()
    assert "accept or reject a plan" in record.getMessage()


def test_the_admin_shows_staff_only_their_projects(
    client: Client, staff_user: User, project: Project, tmp_path: Path
) -> None:
    other = project_create(name="other", repo_path=str(make_git_repo(tmp_path / "o")))
    staff_user.is_superuser = False
    staff_user.save()
    for codename in ("view_agentsession", "change_agentsession"):
        staff_user.user_permissions.add(_perm(codename))
    mine = AgentSession.objects.create(project=project, title="mine")
    theirs = AgentSession.objects.create(project=other, title="theirs")
    grant(staff_user, project, "operator")
    client.force_login(staff_user)
    listing = client.get(reverse("admin:agents_app_agentsession_changelist")).content.decode()
    assert "mine" in listing
    assert "theirs" not in listing
    change = reverse("admin:agents_app_agentsession_change", args=[theirs.pk])
    assert client.get(change).status_code in (302, 404)  # not theirs to see
    mine_change = reverse("admin:agents_app_agentsession_change", args=[mine.pk])
    assert 'name="title"' not in client.get(mine_change).content.decode()  # read-only: operator
    grant(staff_user, project, "admin")
    assert 'name="title"' in client.get(mine_change).content.decode()


def _perm(codename: str) -> Any:
    from django.contrib.auth.models import Permission

    return Permission.objects.get(codename=codename)


def test_the_upgrade_makes_session_creators_admins_else_superusers(
    project: Project, user: User, tmp_path: Path, django_user_model: Any
) -> None:
    root = django_user_model.objects.create(username="root", is_superuser=True)
    orphan = project_create(name="orphan", repo_path=str(make_git_repo(tmp_path / "o")))
    AgentSession.objects.create(project=project, created_by=user)
    AgentSession.objects.create(project=orphan)
    ProjectMembership.objects.all().delete()
    # As it ran on upgraded databases (agents_app's one migration now replaces it).
    backfill = importlib.import_module(
        f"{agents_app_before.__name__}.0012_membership_backfill"
    ).backfill
    backfill(apps, None)
    assert set(
        ProjectMembership.objects.values_list("project__name", "user__username", "role")
    ) == {
        ("sample", "ada", "admin"),
        ("orphan", root.username, "admin"),
    }


def test_egress_to_every_host_is_a_server_admins_grant(roots: Path, user: User) -> None:
    every = {"egress": ["*"]}
    with pytest.raises(SfError, match=r"egress '\*' .* is a server admin's grant"):
        project_create(name="e", repo_path=str(make_git_repo(roots / "e")), created_by=user, policy=every)  # fmt: skip
    every_on_a_port = {"egress": ["pypi.org", "*:8080"]}  # still every host
    with pytest.raises(SfError, match=r"egress '\*' .* is a server admin's grant"):
        project_create(name="p", repo_path=str(make_git_repo(roots / "p")), created_by=user, policy=every_on_a_port)  # fmt: skip
    listed = {"egress": ["pypi.org", "*.pythonhosted.org"]}
    project_create(name="l", repo_path=str(make_git_repo(roots / "l")), created_by=user, policy=listed)  # fmt: skip
    User.objects.filter(pk=user.pk).update(is_staff=True)
    user.refresh_from_db()
    project_create(name="s", repo_path=str(make_git_repo(roots / "s")), created_by=user, policy=every)  # fmt: skip
    assert Project.objects.get(name="s").parsed_policy.egress == ["*"]


def test_the_new_project_form_names_the_allowed_roots(
    roots: Path, logged_in_client: Client
) -> None:
    page = logged_in_client.get(reverse("project-list")).content.decode()
    assert f"<code>{roots.resolve()}</code>" in page


def test_the_servers_shell_is_told_a_path_is_outside_the_roots(roots: Path, tmp_path: Path) -> None:
    code, _, err = run_sf("project", "create", "o", str(make_git_repo(tmp_path / "outside")))
    assert code == 0, err
    assert "is outside SF_REPO_ROOTS" in err
    assert "a person (the web, the API, --as) could not register it" in err
    code, _, err = run_sf("project", "create", "i", str(make_git_repo(roots / "in")))
    assert (code, err) == (0, "")
