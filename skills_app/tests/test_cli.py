"""``sf skills``: a viewer lists, only an operator (or SF's own shell) syncs."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth.models import User

from agents_app.models import Project
from conftest import grant
from skills_app.models import Skill
from skills_app.tests.helpers import write_skill
from tests.cli import run_sf

pytestmark = pytest.mark.django_db


def test_sync_needs_the_operator_role(project: Project, user: User) -> None:
    write_skill(Path(project.repo_path), "notes")
    grant(user, project, "viewer")
    code, _, err = run_sf("skills", "sync", "--project", "sample", "--as", "ada")
    assert code == 2
    assert "sync the project's skills" in err
    assert not Skill.objects.filter(name="notes").exists()
    assert run_sf("skills", "list", "--project", "sample", "--as", "ada")[0] == 0
    grant(user, project, "operator")
    assert run_sf("skills", "sync", "--project", "sample", "--as", "ada")[0] == 0
    assert Skill.objects.filter(name="notes", valid=True).exists()
