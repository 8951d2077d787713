"""The runner's own guarantees (docs/security.md, "SF's own git on a worktree"): git is
told where the repository is, gets no inherited environment or global config, is never
run as ``git add`` on a worktree, and ``stage_changes`` stages like ``git add --all``
without taking in a nested repository, and ``planted_links`` reads again every directory
changed since it last found it clean."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from sf_core import git_links
from sf_core.git import (
    GitError,
    git,
    linked_worktree,
    metadata_problems,
    planted_links,
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


def _reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The directories ``planted_links`` reads from now on (those it did not skip)."""
    read: list[str] = []
    original = git_links.read_dir

    def counted(path: str) -> tuple[list[Path], tuple[str, ...]]:
        read.append(path)
        return original(path)

    monkeypatch.setattr(git_links, "read_dir", counted)
    return read


def test_a_link_planted_after_a_clean_walk_is_found(
    repo: Path, worktree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A directory found clean is not read again while its ctime holds; a link planted
    in it since (a loose object's fan-out directory, the branch's ref directory) is."""
    git_links.forget()
    monkeypatch.setattr(git_links, "RACY_NS", 50_000_000)  # 50 ms, not 2 s: a short test
    tree = linked_worktree(repo, worktree)
    objects, branch = tree.common_dir / "objects", tree.common_dir / "refs/heads/sf/p1/k"
    (objects / "ab").mkdir(exist_ok=True)
    time.sleep(0.1)  # every directory older than RACY_NS
    read = _reads(monkeypatch)
    assert planted_links(tree) == {}
    assert str(objects / "ab") in read
    read.clear()
    assert planted_links(tree) == {}
    assert read == []  # nothing changed: nothing read again

    (objects / "ab" / ("cd" * 19)).symlink_to("/etc/hostname")
    (branch / "evil").symlink_to("/tmp")
    assert planted_links(tree) == {
        tree.common_dir / "refs": [branch / "evil"],
        objects: [objects / "ab" / ("cd" * 19)],
    }
    assert sorted(read) == sorted([str(branch), str(objects / "ab")])


def test_a_directory_changed_just_before_a_walk_is_read_every_time(
    repo: Path, worktree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A change in the same tick of the kernel's coarse clock as the one before keeps a
    directory's ctime: one changed less than RACY_NS before a walk is never remembered."""
    git_links.forget()
    tree = linked_worktree(repo, worktree)
    branch = tree.common_dir / "refs/heads/sf/p1/k"
    (branch / "new").write_text("")
    (branch / "new").unlink()  # its ctime is now
    read = _reads(monkeypatch)
    assert planted_links(tree) == {}
    assert planted_links(tree) == {}
    assert read.count(str(branch)) == 2
    (branch / "evil").symlink_to("/tmp")
    assert planted_links(tree) == {tree.common_dir / "refs": [branch / "evil"]}
