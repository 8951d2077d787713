"""Git worktrees for tasks, checkpoints, and the fail-closed merge into the base branch.

Each attempt at a task works in its own worktree on branch
``sf/p<plan>/<task-key>/<attempt>``, under
``SF_DATA_DIR/worktrees/<project>/p<plan>-<task-key>-<attempt>``: two plans with the same
task key on one repository never share a branch, and a person's retry (a new attempt,
``Task.branch_attempt``) starts from a fresh branch off the base instead of the failed
tree. Automatic retries within one attempt keep working in the same tree. The worktree
and its branch go when the task is done (after a verified merge), cancelled, skipped
or retried. A merge never touches the
base branch unless it is certain: it is computed with ``git merge-tree`` (no
working tree involved), committed with ``commit-tree`` and published with a
compare-and-swap ``update-ref``. A conflict, an empty result or any error leaves
the base branch, the worktree and the task branch exactly as they were.

SF's git never follows what a command in the worktree could have written
(``sf_core.git``): it names the worktree's git directories itself, and before it acts
on a worktree (reuses it, commits its changes, moves its branch) it checks that the
worktree's ``.git`` file, its admin files and its ``HEAD`` are as SF made them
(``worktree_checked``). A worktree a command changed is removed without running git on
it, and the unit fails with what was changed (``WorktreeTampered``).
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from sf_core.errors import SfError
from sf_core.git import (
    Checkout,
    GitError,
    alternates_problems,
    git,
    git_ok,
    linked_worktree,
    metadata_problems,
    planted_links,
    stage_changes,
)
from tasks_app.workspaces import Workspace

logger = logging.getLogger("sf.merge")


class WorktreeTampered(SfError):
    """A command changed where the worktree's git metadata points: the unit fails."""


def worktree_ensure(ws: Workspace) -> Path:
    """Create the worktree (and its branch from the base) or reuse the existing one."""
    registration = _registration(ws)
    if registration is not None and UNFINISHED in registration:
        # A `git worktree add` killed before it finished (its worker killed, the OOM
        # killer) leaves the tree registered, locked "initializing", and maybe checked
        # out in part: committed as it is, the missing files would be deleted on merge.
        worktree_discard(ws.repo, ws.path)
    elif os.path.lexists(ws.path / ".git") or ws.tree.git_dir.exists():
        worktree_checked(ws, missing_ok=True)  # what an earlier unit's command left
        if registration is not None and (ws.path / ".git").exists():
            return ws.path
    ws.path.parent.mkdir(parents=True, exist_ok=True)
    if ws.path.exists():
        shutil.rmtree(ws.path)  # a leftover from a crash before git registered it
    _no_planted_links(ws)
    try:
        git(*_worktree_add(ws), cwd=ws.repo)
    except GitError:
        # A registration left by a crash (its folder gone) refuses the path: prune and
        # try once more. Pruning first, every unit, cost a git process for nothing. The
        # branch is asked again: a failed add (another thread's git holding a lock of
        # the repository, best-of-N's attempts) may have made it before it failed.
        git("worktree", "prune", cwd=ws.repo)
        git(*_worktree_add(ws), cwd=ws.repo)
    problems = metadata_problems(ws.tree, links=False)  # looked for just before the add
    if problems:  # e.g. extensions.worktreeConfig gives it a config.worktree of its own
        worktree_discard(ws.repo, ws.path)
        raise SfError(f"git made the worktree {ws.path} otherwise than SF checks it: {problems}")
    return ws.path


def _no_planted_links(ws: Workspace) -> None:
    """``git worktree add -b`` writes the new branch's ref and appends to its reflog: a
    link that a command of an earlier attempt left in the branch's directories (a unit
    stopped before its checkpoint looked) would have it append to a host file. Such
    links are removed first; one left for a person (``objects/pack``) refuses the add."""
    if not planted_links(ws.tree):
        return
    _unlink_planted(ws.tree)
    left = planted_links(ws.tree)
    if left:
        shown = "; ".join(f"{where}: {', '.join(map(str, found))}" for where, found in left.items())
        raise SfError(f"links or special files git did not make are in {shown}")


def _worktree_add(ws: Workspace) -> list[str]:
    """``git worktree add`` of ``ws``: on its branch, or a new branch from the base."""
    has_branch = git(
        "rev-parse", "--verify", "--quiet", f"refs/heads/{ws.branch}", cwd=ws.repo, check=False
    )
    if has_branch:
        return ["worktree", "add", str(ws.path), ws.branch]
    return ["worktree", "add", "-b", ws.branch, str(ws.path), ws.base]


def worktree_checked(ws: Workspace, *, missing_ok: bool = False) -> Checkout:
    """The worktree's ``Checkout``, once its ``.git`` file, admin files and ``HEAD`` are
    as SF made them. Otherwise a command changed them: the worktree is removed without
    running git on it (its branch, with every checkpoint, stays) and
    ``WorktreeTampered`` says what was changed."""
    tree = ws.tree
    problems = metadata_problems(tree, missing_ok=missing_ok)
    problems += _head_problem(ws, tree, missing_ok=missing_ok)
    if problems:
        _unlink_planted(tree)
        worktree_discard(ws.repo, ws.path)
        raise WorktreeTampered(
            f"a command changed the git metadata of the worktree {ws.path}: "
            f"{'; '.join(problems)}. SF ran no git on it and removed it "
            f"(the branch {ws.branch} and its checkpoints stay)"
        )
    return tree


def _unlink_planted(tree: Checkout) -> None:
    """Remove the links a command left in the repository's own git directories (the
    admin directory goes with the worktree): they outlive the worktree, and every git
    on the repository would write through them."""
    kept = (tree.common_dir / "objects/pack", tree.common_dir / "objects/info")
    for found in planted_links(tree).values():
        for path in found:
            if any(path == top or top in path.parents for top in kept):
                # A pack folder on another disk is a thing people do: refused, not removed.
                logger.warning("%s is a link or special file: remove it if no person made it", path)
                continue
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
            logger.warning("removed %s: a link or special file a command left", path)


def _head_problem(ws: Workspace, tree: Checkout, *, missing_ok: bool) -> list[str]:
    """SF commits on the task's branch only: a ``HEAD`` moved to the base branch would
    have SF's own commit land there, past review and the merge queue."""
    head = tree.git_dir / "HEAD"
    if missing_ok and not os.path.lexists(head):
        return []
    try:
        with open(head, "rb") as handle:
            text = handle.read(4096).decode("utf-8", errors="replace").strip()
    except OSError:
        text = ""
    if text == f"ref: refs/heads/{ws.branch}":
        return []
    return [f"its HEAD is {text!r}, not the task's branch {ws.branch}"]


def worktree_discard(repo: str | Path, path: Path) -> None:
    """Remove a worktree's folder and its admin directory without running git (nothing
    a command wrote there is read); a registration under another name is pruned."""
    admin = linked_worktree(repo, path).git_dir
    shutil.rmtree(path, ignore_errors=True)
    if admin.is_dir():
        shutil.rmtree(admin, ignore_errors=True)
    else:
        git("worktree", "prune", cwd=repo)


UNFINISHED = "locked initializing"  # how `git worktree list` shows one still being added


def _registered(ws: Workspace) -> bool:
    """Is ``ws.path`` a worktree of this repository (not a leftover of another one)?"""
    return _registration(ws) is not None


def _registration(ws: Workspace) -> list[str] | None:
    """The lines `git worktree list --porcelain` gives for ``ws.path`` (None: not one)."""
    listing = git("worktree", "list", "--porcelain", cwd=ws.repo)
    for block in listing.split("\n\n"):
        lines = block.strip().splitlines()
        if lines and lines[0] == f"worktree {ws.path.resolve()}":
            return lines
    return None


# Caches that running code or tests leaves behind are never part of a unit's work,
# whether or not the project's .gitignore lists them.
NEVER_COMMIT = (
    "**/__pycache__/**",
    "**/*.py[co]",
    "**/.pytest_cache/**",
    "**/.mypy_cache/**",
    "**/.ruff_cache/**",
)


def checkpoint_commit(ws: Workspace, message: str) -> str | None:
    """Commit everything the unit changed in its worktree; the new commit, or None."""
    tree = worktree_checked(ws)
    excluded = [f":(exclude,glob){pattern}" for pattern in NEVER_COMMIT]
    excluded += [f":(exclude,literal){path}" for path in ws.private]
    if not stage_changes(tree, [".", *excluded]):
        return None
    git(
        "-c",
        "user.name=SF",
        "-c",
        "user.email=sf@localhost",
        "commit",
        "--quiet",
        "--no-verify",
        "-m",
        message,
        cwd=tree,
    )
    return git("rev-parse", "HEAD", cwd=tree)


def checkpoint_patch(ws: Workspace) -> str:
    """The task branch's changes against the base, as one patch (``base...branch``:
    from their merge base, found by the same git process)."""
    return git("diff", "--binary", f"{ws.base}...{ws.branch}", "--", cwd=ws.repo)


@dataclass(frozen=True)
class MergeResult:
    merged: bool
    commit: str = ""  # the base branch's new head when merged (the candidate before)
    reason: str = ""  # why not, when not
    already: bool = False  # the branch was merged before (a repeated merge is a no-op)
    base_head: str = ""  # the base head the merge was computed on
    moved: bool = False  # refused only because the base branch moved meanwhile


def merge_into_base(ws: Workspace, *, commit: str | None, message: str) -> MergeResult:
    """Merge the task branch, which must contain the unit's ``commit``, fail-closed."""
    candidate = merge_compute(ws, commit=commit, message=message)
    if not candidate.merged or candidate.already:
        return candidate
    return merge_publish(ws, candidate, commit=commit or "")


def merge_compute(ws: Workspace, *, commit: str | None, message: str) -> MergeResult:
    """The merge commit of the task branch onto the current base head, not yet on the
    base branch (``commit`` of the result); or why there is none. Touches no ref."""
    if not commit:
        return MergeResult(merged=False, reason="the unit produced no changes (empty result)")
    try:
        if planted_links(ws.tree):  # left by a command since the checkpoint looked
            _unlink_planted(ws.tree)
            return MergeResult(merged=False, reason="a command left links in its git directories")
        alternates = alternates_problems(ws.tree)
        if alternates:
            return MergeResult(merged=False, reason="; ".join(alternates))
        return _compute(ws, commit, message)
    except GitError as exc:
        return MergeResult(merged=False, reason=str(exc))


def _compute(ws: Workspace, commit: str, message: str) -> MergeResult:
    heads = git("rev-parse", f"refs/heads/{ws.base}", f"refs/heads/{ws.branch}", cwd=ws.repo)
    base_head, branch_head = heads.splitlines()
    if git_ok("merge-base", "--is-ancestor", commit, base_head, cwd=ws.repo):
        return MergeResult(merged=True, commit=base_head, already=True, base_head=base_head)
    if not git_ok("merge-base", "--is-ancestor", commit, branch_head, cwd=ws.repo):
        return MergeResult(merged=False, reason=f"{ws.branch} no longer contains {commit[:12]}")
    tree = git(
        "merge-tree",
        "--write-tree",
        "--name-only",
        "--no-messages",
        base_head,
        branch_head,
        cwd=ws.repo,
        check=False,
    )
    lines = tree.splitlines()
    if len(lines) != 1:
        conflicts = ", ".join(lines[1:]) or "unknown files"
        return MergeResult(merged=False, reason=f"merge conflict in {conflicts}")
    merged = git(
        "-c",
        "user.name=SF",
        "-c",
        "user.email=sf@localhost",
        "commit-tree",
        lines[0],
        "-p",
        base_head,
        "-p",
        branch_head,
        "-m",
        message,
        cwd=ws.repo,
    )
    return MergeResult(merged=True, commit=merged, base_head=base_head)


def commit_reworded(ws: Workspace, commit: str, message: str) -> str:
    """The same tree and parents as ``commit`` under another message. A merge candidate
    that failed verification goes to its task's branch under a message that does not
    read as a merge: the base later reaches it through the task's next merge, and one
    ``sf: merge <key>`` per task is what its history must show (merged once)."""
    parents = git("rev-list", "--parents", "-n", "1", commit, cwd=ws.repo).split()[1:]
    tree = git("rev-parse", f"{commit}^{{tree}}", cwd=ws.repo)
    args = [arg for parent in parents for arg in ("-p", parent)]
    identity = ("-c", "user.name=SF", "-c", "user.email=sf@localhost")
    return git(*identity, "commit-tree", tree, *args, "-m", message, cwd=ws.repo)


def merge_publish(ws: Workspace, candidate: MergeResult, *, commit: str) -> MergeResult:
    """Move the base branch to ``candidate.commit`` with a compare-and-swap on the head
    it was computed on; ``moved`` when the base branch moved meanwhile (compute again)."""
    old, merged = candidate.base_head, candidate.commit
    try:
        checked_out = _base_checked_out(ws)
        if checked_out and _base_worktree_dirty(ws):
            return MergeResult(
                merged=False, reason=f"the checked-out {ws.base} has uncommitted changes"
            )
        # Compare-and-swap: fails if someone moved the base branch since we read it.
        if not git_ok("update-ref", f"refs/heads/{ws.base}", merged, old, cwd=ws.repo):
            now = git("rev-parse", f"refs/heads/{ws.base}", cwd=ws.repo)
            return MergeResult(
                merged=False, moved=now != old, reason=f"{ws.base} moved from {old[:12]}"
            )
        if not git_ok("merge-base", "--is-ancestor", commit, merged, cwd=ws.repo):
            return MergeResult(
                merged=False, reason="the merge commit does not contain the unit's commit"
            )
    except GitError as exc:
        return MergeResult(merged=False, reason=str(exc))
    # The base branch has moved: merged, whatever happens to the checked-out files now
    # (a failed refresh is caught up by the next merge, ``_catch_up_checked_out_base``).
    try:
        if checked_out:  # bring its files up to the new commit
            git("read-tree", "-m", "-u", old, merged, cwd=ws.repo)
    except GitError as exc:
        logger.warning("%s merged as %s; its checked-out files lag: %s", ws.branch, merged, exc)
    return MergeResult(merged=True, commit=merged, base_head=old)


def scratch_worktree_add(ws: Workspace, *, name: str, commit: str) -> Path:
    """A detached worktree of ``commit`` (a merge candidate) to verify it in."""
    path = ws.path.parent.parent.parent / "merge" / ws.path.parent.name / name
    if path.exists():
        scratch_worktree_remove(ws, path)
    path.parent.mkdir(parents=True, exist_ok=True)
    git("worktree", "add", "--detach", "--quiet", str(path), commit, cwd=ws.repo)
    return path


def scratch_worktree_remove(ws: Workspace, path: Path) -> None:
    """Verify commands ran in it: removed without running git on what they left."""
    worktree_discard(ws.repo, path)


def _base_checked_out(ws: Workspace) -> bool:
    """Whether the repository has a work tree with the base branch checked out (its
    files must follow the base ref). One git process answers both questions."""
    answer = git(
        "rev-parse", "--is-bare-repository", "--symbolic-full-name", "HEAD", cwd=ws.repo
    ).splitlines()
    return answer == ["false", f"refs/heads/{ws.base}"]


def _base_worktree_dirty(ws: Workspace) -> bool:
    """The checked-out base branch's files differ from its head, and not only because
    an earlier merge moved the branch before refreshing them (caught up here)."""
    if not git("status", "--porcelain", "--untracked-files=no", cwd=ws.repo):
        return False
    return not _catch_up_checked_out_base(ws)


# How far back the checked-out files of the base branch may lag behind its head.
CATCH_UP_DEPTH = 20


def _catch_up_checked_out_base(ws: Workspace) -> bool:
    """The checked-out base differs from its head: if only because an earlier merge
    moved the branch and died (or failed) before refreshing the files — they are
    exactly an older commit of the branch, nothing changed on top — bring them up to
    the head. True if caught up; False for a person's uncommitted changes."""
    if not git_ok("diff", "--quiet", cwd=ws.repo):
        return False  # files changed in the working tree: a person's, never ours
    heads = git("rev-list", "--first-parent", "-n", str(CATCH_UP_DEPTH), "HEAD", cwd=ws.repo)
    for older in heads.splitlines()[1:]:
        if git_ok("diff", "--cached", "--quiet", older, cwd=ws.repo):
            git("read-tree", "-m", "-u", older, "HEAD", cwd=ws.repo)
            logger.warning("the checked-out %s lagged at %s; caught up", ws.base, older[:12])
            return True
    return False


def worktree_remove(ws: Workspace) -> None:
    """Remove the worktree and its branch, and check both are gone (raises ``GitError``
    otherwise). Called after a verified merge, and for a cancelled, skipped or retried
    task, whose unmerged work goes with it (its patch stays on its units)."""
    # Removed as files, not by `git worktree remove`, which would read what a command
    # left in it (and refuse a tree whose `git worktree add` was killed: still locked).
    worktree_discard(ws.repo, ws.path)
    git("branch", "-D", ws.branch, cwd=ws.repo, check=False)
    if _registered(ws) or git(
        "rev-parse", "--verify", "--quiet", f"refs/heads/{ws.branch}", cwd=ws.repo, check=False
    ):
        raise GitError(f"could not remove the worktree {ws.path} or the branch {ws.branch}")
