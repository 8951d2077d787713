"""/skills and /skill by role, and ``sf skills sync|list`` at the shell."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from agents_app.access import AccessDenied
from agents_app.services import command_run
from conftest import grant
from sf_core.actors import Actor
from skills_app.models import SkillUse
from tests.cli import run_sf

pytestmark = pytest.mark.django_db


def add(repo: Path, name: str, text: str | None = None) -> None:
    folder = repo / ".agents" / "skills" / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(
        text or f"---\nname: {name}\ndescription: about {name}\n---\nB\n"
    )


def test_a_viewer_lists_skills_but_cannot_invoke_one(
    project: Any, git_repo: Path, agent_session: Any, django_user_model: Any
) -> None:
    add(git_repo, "notes")
    viewer = django_user_model.objects.create_user("viewer", password="x")
    grant(viewer, project, "viewer")
    who = Actor.of(viewer)
    assert (
        "- notes [valid]" in command_run(session=agent_session, text="/skills", actor=who).message
    )
    with pytest.raises(AccessDenied):
        command_run(session=agent_session, text="/skill notes", actor=who)
    assert not SkillUse.objects.exists()


def test_an_outsider_cannot_even_list(
    project: Any, agent_session: Any, django_user_model: Any
) -> None:
    outsider: User = django_user_model.objects.create_user("outsider", password="x")
    with pytest.raises(AccessDenied):
        command_run(session=agent_session, text="/skills", actor=Actor.of(outsider))


def test_sync_and_list_at_the_shell(project: Any, git_repo: Path) -> None:
    add(git_repo, "notes")
    add(git_repo, "broken", "---\nname: other\ndescription: d\n---\n")
    code, out, _ = run_sf("skills", "sync", "--project", project.name, "--output-format", "json")
    assert code == 1  # an invalid skill: the sync says so with its exit code
    first = json.loads(out)[0]
    assert sorted(first["added"]) == ["broken", "notes"]
    assert "must match its folder 'broken'" in first["invalid"]["broken"]
    code, out, _ = run_sf("skills", "list", "--project", project.name)
    assert code == 0
    assert "notes" in out
    assert "INVALID: " in out
    code, _, err = run_sf("skills", "list", "--project", "nope")
    assert code == 2
    assert "no project 'nope'; projects: sample" in err
