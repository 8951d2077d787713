"""The runner's own guarantees (docs/security.md, "SF's own git on a worktree"): git is
told where the repository is, gets no inherited environment or global config, is never
run as ``git add`` on a worktree, and ``stage_changes`` stages like ``git add --all``
without taking in a nested repository."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from sf_core.git import (
    GitError,
    git,
    linked_worktree,
    metadata_problems,
    repository,
    stage_changes,
)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
    (path / "a.txt").write_text("a\n")
    (path / "gone.txt").write_text("g\n")
    subprocess.run(["git", "add", "."], cwd=path, check=True)
    identity = ["-c", "user.name=t", "-c", "user.email=t@e"]
    subprocess.run(["git", *identity, "commit", "-qm", "a"], cwd=path, check=True)
    return path


@pytest.fixture
def worktree(repo: Path, tmp_path: Path) -> Path:
    path = tmp_path / "wt" / "p1-k-1"
    git("worktree", "add", "-q", "-b", "sf/p1/k/1", str(path), "main", cwd=repo)
    return path


def test_a_worktree_is_named_from_the_repository_not_found_from_its_git_file(
    repo: Path, worktree: Path
) -> None:
    tree = linked_worktree(repo, worktree)
    assert tree.git_dir == (repo / ".git" / "worktrees" / "p1-k-1").resolve()
    assert metadata_problems(tree) == []
    (worktree / ".git").write_text("gitdir: /nowhere\n")

    assert git("rev-parse", "--abbrev-ref", "HEAD", cwd=tree) == "sf/p1/k/1"
    assert metadata_problems(tree) == [f"its .git file points at '/nowhere', not at {tree.git_dir}"]


def test_a_git_file_is_no_repository_to_run_git_in(worktree: Path) -> None:
    with pytest.raises(GitError, match=r"it has a \.git file, not a directory"):
        repository(worktree)
    assert git("rev-parse", "HEAD", cwd=worktree, check=False) == ""


def test_git_add_is_refused_on_a_worktree(repo: Path, worktree: Path) -> None:
    with pytest.raises(GitError, match="git add is not run on a worktree"):
        git("add", "--all", cwd=linked_worktree(repo, worktree))


def test_neither_the_environment_nor_the_global_config_reaches_git(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[sf]\n\tfrom = global\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", "'sf.from'='environment'")
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "elsewhere"))

    assert git("config", "--get", "sf.from", cwd=repo, check=False) == ""
    assert git("config", "--get", "core.fsmonitor", cwd=repo) == "false"
    assert git("config", "--get", "core.hooksPath", cwd=repo) == "/dev/null"


def test_stage_changes_stages_what_add_all_would_but_no_nested_repository(
    repo: Path, worktree: Path
) -> None:
    tree = linked_worktree(repo, worktree)
    (worktree / "a.txt").write_text("changed\n")
    (worktree / "gone.txt").unlink()
    (worktree / "new dir").mkdir()
    (worktree / "new dir" / "with space.txt").write_text("n\n")
    (worktree / "skip.pyc").write_text("")
    subprocess.run(["git", "init", "-q", str(worktree / "plans" / "r")], check=True)
    (worktree / "plans" / "r" / "f").write_text("nested\n")

    assert stage_changes(tree, [".", ":(exclude,glob)**/*.pyc"])

    staged = git("diff", "--cached", "--name-status", cwd=tree).splitlines()
    assert staged == ["M\ta.txt", "D\tgone.txt", "A\tnew dir/with space.txt"]
