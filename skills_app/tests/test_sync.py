"""Syncing skill folders into rows: added, changed, unchanged (not re-read), removed
(kept with its history), invalid (stored with its problem), user skills shadowed."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from agents_app.models import Project
from agents_app.services import project_create
from skills_app.loader import skills_available
from skills_app.models import Skill, SkillEvalCase, SkillScope
from skills_app.sync import project_skills_sync, user_skills_sync

pytestmark = pytest.mark.django_db


def write_skill(root: Path, name: str, description: str = "d", extra: str = "") -> Path:
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {description}\n{extra}---\nBody of {name}.\n"
    )
    return folder


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    path.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=path, check=True)
    return path


def skills_root(repo: Path) -> Path:
    return repo / ".agents" / "skills"


def test_sync_adds_changes_keeps_and_removes(repo: Path) -> None:
    project = Project.objects.create(name="p", repo_path=str(repo))
    write_skill(skills_root(repo), "alpha")
    write_skill(skills_root(repo), "beta")
    first = project_skills_sync(project)
    assert (sorted(first.added), first.changed, first.unchanged) == (["alpha", "beta"], [], 0)
    alpha = Skill.objects.get(name="alpha")
    assert alpha.source_path == ".agents/skills/alpha/SKILL.md"
    assert (alpha.scope, alpha.project, alpha.valid) == ("project", project, True)

    write_skill(skills_root(repo), "alpha", description="changed")
    (skills_root(repo) / "beta" / "SKILL.md").unlink()
    (skills_root(repo) / "beta").rmdir()
    second = project_skills_sync(project)
    assert (second.changed, second.removed, second.unchanged) == (["alpha"], ["beta"], 0)
    assert Skill.objects.get(name="alpha").description == "changed"
    beta = Skill.objects.get(name="beta")
    assert beta.removed_at is not None  # kept with its uses and eval history
    assert [s.name for s in skills_available(project)] == ["alpha"]

    third = project_skills_sync(project)
    assert (third.added, third.changed, third.unchanged) == ([], [], 1)


def test_an_invalid_skill_is_stored_with_its_problem_and_not_fatal(repo: Path) -> None:
    project = Project.objects.create(name="p", repo_path=str(repo))
    write_skill(skills_root(repo), "good")
    bad = skills_root(repo) / "bad"
    bad.mkdir()
    (bad / "SKILL.md").write_text("---\nname: [bad\n---\n")
    report = project_skills_sync(project)
    assert sorted(report.added) == ["bad", "good"]
    assert "invalid YAML frontmatter" in report.invalid["bad"]
    row = Skill.objects.get(name="bad")
    assert not row.valid
    assert "bad/SKILL.md" in row.problem
    # Unchanged on the next sync, still reported.
    assert "bad" in project_skills_sync(project).invalid
    # Fixed: valid again.
    write_skill(skills_root(repo), "bad")
    assert project_skills_sync(project).changed == ["bad"]
    assert Skill.objects.get(name="bad").valid


def test_eval_cases_are_synced_with_the_skill(repo: Path) -> None:
    project = Project.objects.create(name="p", repo_path=str(repo))
    folder = write_skill(skills_root(repo), "alpha")
    case = folder / "evals" / "one"
    case.mkdir(parents=True)
    (case / "task.md").write_text("do it")
    (case / "grader.py").write_text("")
    (case / "trace.jsonl").write_text("")
    project_skills_sync(project)
    row = SkillEvalCase.objects.get()
    assert (row.name, row.path, row.task_prompt, row.has_trace) == (
        "one",
        "evals/one",
        "do it",
        True,
    )
    (case / "trace.jsonl").unlink()
    (case / "task.md").unlink()
    project_skills_sync(project)
    row.refresh_from_db()
    assert not row.valid
    assert "has no task.md" in row.problem


def test_user_skills_are_shadowed_by_the_projects(repo: Path, tmp_path: Path) -> None:
    project = Project.objects.create(name="p", repo_path=str(repo))
    user = tmp_path / "user-skills"
    write_skill(user, "shared", description="the user's")
    write_skill(user, "mine", description="only the user's")
    write_skill(skills_root(repo), "shared", description="the project's")
    assert sorted(user_skills_sync(root=user).added) == ["mine", "shared"]
    project_skills_sync(project)
    available = {s.name: s for s in skills_available(project)}
    assert available["shared"].description == "the project's"
    assert available["mine"].scope == SkillScope.USER
    assert available["mine"].source_path == str(user.resolve() / "mine" / "SKILL.md")


def test_registering_a_project_syncs_its_skills(
    repo: Path, django_capture_on_commit_callbacks
) -> None:
    write_skill(skills_root(repo), "alpha")
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-qm", "s"],
        cwd=repo,
        check=True,
    )
    with django_capture_on_commit_callbacks(execute=True):
        project = project_create(name="registered", repo_path=str(repo))
    assert list(project.skills.values_list("name", flat=True)) == ["alpha"]


def test_a_repository_without_skills_syncs_to_nothing(repo: Path) -> None:
    project = Project.objects.create(name="p", repo_path=str(repo))
    report = project_skills_sync(project)
    assert (report.added, report.unchanged) == ([], 0)
