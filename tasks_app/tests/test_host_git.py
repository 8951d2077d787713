"""SF's own git, outside the sandbox, never runs what a command in a worktree planted
(issue 27, finding 1). Each test plays the attacker by writing the files a sandboxed
command can write — the worktree, its ``.git`` file, its admin directory under
``<repo>/.git/worktrees/`` — while a unit runs, then lets SF's real code path act on
the worktree (the checkpoint, the merge queue) and checks that the planted program
never ran and that changed metadata failed the unit with what was changed."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agents_app.models import AgentSession, TraceEvent, TraceKind
from agents_app.tests.runtime_helpers import ScriptedModel
from tasks_app.models import Task, Unit
from tasks_app.tests.test_engine import MODEL, git, repo, start, task_spec, writes
from tasks_app.workspaces import Workspace, workspace_of

pytestmark = pytest.mark.django_db
__all__ = ["repo"]  # the fixture, shared with test_engine


@pytest.fixture
def marker(tmp_path: Path) -> Path:
    """Where the attacker's program leaves its mark if anything runs it."""
    return tmp_path / "ran"


@pytest.fixture
def program(tmp_path: Path, marker: Path) -> Path:
    """The attacker's program: as an fsmonitor hook, a hook or a clean filter."""
    path = tmp_path / "evil.sh"
    path.write_text(f'#!/bin/sh\necho "$0 $*" >> {marker}\ncat\n')
    path.chmod(0o755)
    return path


def attacker_repo(path: Path, program: Path) -> Path:
    """A git directory the attacker controls: fsmonitor, hooks path and hooks all run
    ``program``."""
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    gitdir = path / ".git"
    hooks = path / "hooks"
    hooks.mkdir()
    for hook in ("post-commit", "reference-transaction", "post-index-change", "pre-commit"):
        (hooks / hook).symlink_to(program)
    for key, value in (("core.fsmonitor", str(program)), ("core.hooksPath", str(hooks))):
        subprocess.run(["git", "config", "--file", str(gitdir / "config"), key, value], check=True)
    return gitdir


def admin(ws: Workspace) -> Path:
    """The worktree's admin directory, where git keeps it (writable in the sandbox)."""
    return ws.repo / ".git" / "worktrees" / ws.path.name


def run_tampered(session: AgentSession, plant: Callable[[Workspace], None]) -> Any:
    """One unit whose command plants files after its first step: the agent writes
    hello.txt, the attacker's files appear, the agent finishes."""
    from tasks_app.engine.unit import UnitOptions, unit_run

    task = Task.objects.get(plan__session=session)
    model = ScriptedModel(*writes("hello"))

    def completion(**kwargs: Any) -> Any:
        if len(model.steps) == 1:  # after the write, before "finish"
            plant(workspace_of(task))
        return model(**kwargs)

    return unit_run(
        task_id=task.pk, worker="test", options=UnitOptions(model=MODEL, completion=completion)
    )


def assert_failed_with(session: AgentSession, words: str) -> Unit:
    unit = Unit.objects.get(task__plan__session=session)
    assert unit.status == "failed"
    assert words in unit.summary
    errors = TraceEvent.objects.filter(unit=unit, kind=TraceKind.ERROR)
    assert any(words in event.payload["error"] for event in errors), "the trace says why"
    return unit


def test_a_planted_git_file_fails_the_unit_and_its_fsmonitor_never_runs(
    repo: Path, tmp_path: Path, program: Path, marker: Path
) -> None:
    session, _ = start(repo, task_spec())
    evil = attacker_repo(tmp_path / "evil", program)

    def plant(ws: Workspace) -> None:
        (ws.path / ".git").write_text(f"gitdir: {evil}\n")

    report = run_tampered(session, plant)

    assert not marker.exists(), "SF's git ran the planted fsmonitor or hooks"
    assert (report.outcome, report.task_status) == ("error", "failed")
    assert_failed_with(session, f"its .git file points at '{evil}'")
    ws = workspace_of(Task.objects.get(plan__session=session))
    assert not ws.path.exists(), "the worktree a command changed is removed"
    assert git(repo, "rev-parse", "--verify", ws.branch), "its branch stays"


def test_a_planted_commondir_fails_the_unit_and_its_config_never_runs(
    repo: Path, tmp_path: Path, program: Path, marker: Path
) -> None:
    session, _ = start(repo, task_spec())
    evil = attacker_repo(tmp_path / "evil", program)

    def plant(ws: Workspace) -> None:
        (admin(ws) / "commondir").write_text(f"{evil}\n")

    run_tampered(session, plant)

    assert not marker.exists(), "SF's git ran the planted repository's fsmonitor or hooks"
    assert_failed_with(session, f"its admin file commondir points at '{evil}'")


def test_a_planted_config_worktree_fails_the_unit(repo: Path, program: Path, marker: Path) -> None:
    session, _ = start(repo, task_spec())

    def plant(ws: Workspace) -> None:
        (admin(ws) / "config.worktree").write_text(f"[core]\n\tfsmonitor = {program}\n")

    run_tampered(session, plant)

    assert not marker.exists()
    assert_failed_with(session, "a config.worktree was written into its admin directory")


def test_a_head_moved_to_the_base_branch_fails_the_unit_and_the_base_stays(
    repo: Path,
) -> None:
    """SF's checkpoint would otherwise commit straight onto main, past review."""
    session, _ = start(repo, task_spec())
    base = git(repo, "rev-parse", "main")

    def plant(ws: Workspace) -> None:
        (admin(ws) / "HEAD").write_text("ref: refs/heads/main\n")

    run_tampered(session, plant)

    assert git(repo, "rev-parse", "main") == base
    assert_failed_with(session, "its HEAD is 'ref: refs/heads/main'")


def nested_repo(path: Path, program: Path) -> None:
    """A repository inside the worktree whose own config runs ``program`` as its
    fsmonitor and as the clean filter of every file."""
    path.mkdir(parents=True)
    steps = [
        ["init", "-q"],
        ["config", "core.fsmonitor", str(program)],
        ["config", "filter.evil.clean", str(program)],
    ]
    for args in steps:
        subprocess.run(["git", *args], cwd=path, check=True)
    (path / ".gitattributes").write_text("* filter=evil\n")
    (path / "f").write_text("x\n")
    plain = ["git", "-c", "core.fsmonitor=false", "-c", "filter.evil.clean=cat"]
    subprocess.run([*plain, "add", "."], cwd=path, check=True)
    identity = ["-c", "user.name=a", "-c", "user.email=a@example.com"]
    subprocess.run([*plain, *identity, "commit", "-qm", "n"], cwd=path, check=True)


def test_a_nested_repository_is_never_entered_by_the_checkpoint(
    repo: Path, program: Path, marker: Path
) -> None:
    """The agent tracked a repository of its own (``git add plans/r`` in the sandbox) and
    left it dirty: ``git add --all`` would run ``git status`` inside it, with its config."""
    session, _ = start(repo, task_spec())

    def plant(ws: Workspace) -> None:
        nested_repo(ws.path / "plans" / "r", program)
        subprocess.run(["git", "add", "plans/r"], cwd=ws.path, check=True, capture_output=True)
        os.utime(ws.path / "plans" / "r" / "f", (1, 1))  # stat-dirty: git must look inside

    report = run_tampered(session, plant)

    assert not marker.exists(), "SF's git entered the nested repository"
    assert report.task_status == "done", "checkpointed, verified and merged"
    unit = Unit.objects.get(task__plan__session=session)
    assert "hello.txt" in unit.checkpoint_patch


def test_a_git_variable_in_the_workers_environment_does_not_reach_sfs_git(
    repo: Path, program: Path, marker: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session, _ = start(repo, task_spec())
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", f"'core.fsmonitor'='{program}'")
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "core.hooksPath")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", str(program.parent))
    (program.parent / "post-commit").symlink_to(program)

    report = run_tampered(session, lambda ws: None)

    assert not marker.exists(), "an inherited GIT_* variable ran a program"
    assert report.task_status == "done", "checkpointed, verified and merged"
    task = Task.objects.get(plan__session=session)
    assert git(repo, "show", f"{task.checkpoint_ref}:hello.txt") == "hello"


def test_a_worktree_an_earlier_unit_left_changed_fails_the_next_unit_before_any_git(
    repo: Path, tmp_path: Path, program: Path, marker: Path
) -> None:
    """The unit that planted the file crashed before its checkpoint: the next unit finds
    the worktree changed when it reuses it, and SF's git never ran in it."""
    from tasks_app.engine.worktrees import worktree_ensure

    session, _ = start(repo, task_spec())
    ws = workspace_of(Task.objects.get(plan__session=session))
    worktree_ensure(ws)
    evil = attacker_repo(tmp_path / "evil", program)
    (ws.path / ".git").write_text(f"gitdir: {evil}\n")

    run_tampered(session, lambda ws: None)

    assert not marker.exists(), "SF's git ran in the worktree a command changed"
    unit = assert_failed_with(session, f"its .git file points at '{evil}'")
    assert unit.checkpoint_commit == ""


def test_links_planted_in_the_git_directories_are_never_followed_by_sfs_git(
    repo: Path, tmp_path: Path
) -> None:
    """The sandbox makes the admin directory, the branch's ref and reflog directories
    and ``objects/`` writable: a command left links there to files and a folder of the
    host's. SF's checkpoint appended its reflog lines to both files (as root: any file)
    and wrote the new blob into the folder (any directory)."""
    session, _ = start(repo, task_spec())
    outside = tmp_path / "outside"
    outside.mkdir()
    common = repo / ".git"
    planted: list[Path] = []

    def plant(ws: Workspace) -> None:
        blob = git(ws.path, "hash-object", "hello.txt")
        links = {
            admin(ws) / "logs" / "HEAD": outside / "headlog",
            common / "logs" / "refs" / "heads" / ws.branch: outside / "reflog",
            common / "objects" / blob[:2]: outside,
        }
        for link, target in links.items():
            link.parent.mkdir(parents=True, exist_ok=True)
            link.unlink(missing_ok=True)
            link.symlink_to(target)
        planted.extend(links)

    run_tampered(session, plant)

    assert list(outside.iterdir()) == [], "SF's git wrote through a planted link"
    assert_failed_with(session, f"{common / 'objects'} holds a link")
    assert not [path for path in planted if path.is_symlink()], "the links are removed"


def test_a_link_left_after_the_checkpoint_refuses_the_merge(repo: Path, tmp_path: Path) -> None:
    """Another unit's command on the same repository (or an MCP server still running)
    may plant a link after the checkpoint looked: the merge writes objects too."""
    from tasks_app.engine.worktrees import merge_compute, worktree_ensure

    session, _ = start(repo, task_spec())
    ws = workspace_of(Task.objects.get(plan__session=session))
    worktree_ensure(ws)
    link = repo / ".git/objects/zz"
    link.symlink_to(tmp_path)

    result = merge_compute(ws, commit=git(repo, "rev-parse", "main"), message="m")

    assert (result.merged, result.reason) == (False, "a command left links in its git directories")
    assert not link.is_symlink()


def test_a_reflog_link_an_earlier_attempt_left_is_removed_before_the_worktree_is_added(
    repo: Path, tmp_path: Path
) -> None:
    """A command of an earlier attempt (its unit stopped before a checkpoint looked) left
    a link where the next attempt's branch keeps its reflog, a directory it had writable:
    ``git worktree add -b`` appended its line to the host file the link names."""
    from tasks_app.engine.worktrees import worktree_ensure

    session, _ = start(repo, task_spec())
    ws = workspace_of(Task.objects.get(plan__session=session))
    outside = tmp_path / "outside"
    outside.mkdir()
    link = repo / ".git" / "logs" / "refs" / "heads" / ws.branch
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(outside / "reflog")

    worktree_ensure(ws)

    assert list(outside.iterdir()) == [], "git worktree add wrote through a planted link"
    assert not link.is_symlink()
    assert git(ws.path, "rev-parse", "--abbrev-ref", "HEAD") == ws.branch


def test_an_alternates_file_a_command_wrote_fails_the_unit(repo: Path, tmp_path: Path) -> None:
    """``objects/info`` is writable in the sandbox (a fan-out directory): an alternates
    file there had SF's git read objects from any directory it names, as root — another
    project's repository, whose blobs a tree forged in this one brings into its patch."""
    session, _ = start(repo, task_spec())
    other = tmp_path / "other"
    subprocess.run(["git", "init", "-q", str(other)], check=True)
    alternates = repo / ".git" / "objects" / "info" / "alternates"

    def plant(ws: Workspace) -> None:
        alternates.parent.mkdir(exist_ok=True)
        alternates.write_text(f"{other / '.git' / 'objects'}\n")

    run_tampered(session, plant)

    unit = assert_failed_with(session, f"{alternates} names object directories")
    assert unit.checkpoint_commit == ""
