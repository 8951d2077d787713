"""Headless with an acting user (``--as`` / ``SF_USER``): the run's acts are checked
before anything is written; a refusal is one line on stderr and exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents_app.models import AgentSession, Project
from tasks_app.models import Plan
from tests.access_world import PLAN_YAML, ROLES, allowed, world_make
from tests.cli import run_sf

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("role", ROLES)
def test_query_needs_viewer(tmp_path: Path, role: str | None) -> None:
    world = world_make(tmp_path, role)
    code, out, err = run_sf("headless", "query", "--session", str(world.session.pk), "--as", "bob")
    if allowed(role, "view"):
        assert code == 0, err
        assert f'"id": {world.session.pk}' in out
    else:
        assert code == 2
        assert "needs the viewer role" in err


@pytest.mark.parametrize("role", ROLES)
def test_an_autonomous_run_needs_an_approver(tmp_path: Path, role: str | None) -> None:
    """``--autonomous`` accepts the plan: refused below approver, before anything is
    written (no session, no plan)."""
    world = world_make(tmp_path, role)
    plan_file = tmp_path / "plan.yaml"
    plan_file.write_text(PLAN_YAML)
    sessions, plans = AgentSession.objects.count(), Plan.objects.count()
    args = ["--project", str(world.repo), "--plan-file", str(plan_file), "--autonomous"]
    code, _, err = run_sf("headless", *args, "--model", "openai/none", "--as", "bob")
    if allowed(role, "accept_plan"):
        assert "needs the" not in err
    else:
        assert code == 2
        assert "needs the" in err
        assert err.count("\n") == 1, err
        assert (AgentSession.objects.count(), Plan.objects.count()) == (sessions, plans)


def test_a_new_repository_needs_a_registrant_under_the_roots(tmp_path: Path) -> None:
    from conftest import make_git_repo

    world_make(tmp_path, "approver")  # bob, an approver (not admin) of a project
    repo = make_git_repo(tmp_path / "fresh")
    plan_file = tmp_path / "plan.yaml"
    plan_file.write_text(PLAN_YAML)
    code, _, err = run_sf(
        "headless", "--project", str(repo), "--plan-file", str(plan_file), "--as", "bob"
    )
    assert code == 2
    assert "needs the register-repository permission" in err  # no project role grants it
    assert not Project.objects.filter(repo_path=str(repo.resolve())).exists()
