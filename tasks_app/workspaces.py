"""Where a task's attempt works: its worktree's path and branch (``Workspace``).

Names only, nothing on disk: the engine creates, checkpoints, merges and removes the
worktrees (``tasks_app.engine.worktrees``); the board, the doctor and the features
find a task's tree and branch here, below the engine.

Each attempt at a task works in its own worktree on branch
``sf/p<plan>/<task-key>/<attempt>``, under
``SF_DATA_DIR/worktrees/<project>/p<plan>-<task-key>-<attempt>``.

A project whose policy names a repository of record (``record.url``) works in this
host's mirror of it, ``SF_DATA_DIR/mirrors/<project>``, not in ``repo_path``: each worker
host has its own mirror and worktrees (``tasks_app.engine.record`` fetches and pushes).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

from agents_app.mirrors import mirror_path
from agents_app.models import Project
from sf_core.git import Checkout, linked_worktree
from tasks_app.models import Task


@dataclass(frozen=True)
class Workspace:
    repo: Path
    path: Path
    branch: str
    base: str
    # Files written into the tree from secrets: never committed (worktree-environment.md).
    private: tuple[str, ...] = ()
    # The repository of record's URL ('' in single-host mode: ``repo`` is the record).
    remote: str = ""

    @property
    def tree(self) -> Checkout:
        """The worktree, as git must see it: named from SF's records, not its files."""
        return linked_worktree(self.repo, self.path)


def workspace_for(
    *,
    repo: str | Path,
    project_id: int,
    plan_id: int,
    key: str,
    base: str,
    attempt: int = 1,
    private: tuple[str, ...] = (),
    remote: str = "",
) -> Workspace:
    name = f"p{plan_id}-{key}-{attempt}"
    path = Path(settings.SF_DATA_DIR) / "worktrees" / str(project_id) / name
    branch = f"sf/p{plan_id}/{key}/{attempt}"
    return Workspace(
        repo=Path(repo), path=path, branch=branch, base=base, private=private, remote=remote
    )


def project_repo(project: Project) -> Path:
    """Where this host works on ``project``: its mirror of the repository of record, or
    (single-host mode) the registered repository itself."""
    if project.parsed_policy.record is not None:
        return mirror_path(project.pk)
    return project.repository()  # resolved again: refused if a symlink moved it


def workspace_of(task: Task) -> Workspace:
    """The workspace of ``task``'s current attempt (``Task.branch`` names its branch)."""
    project = Project.objects.get(pk=task.plan.session.project_id)
    record = project.parsed_policy.record
    return workspace_for(
        repo=project_repo(project),
        project_id=project.pk,
        plan_id=task.plan_id,
        key=task.key,
        base=project.base_branch,
        attempt=task.branch_attempt,
        private=tuple(f.path for f in project.parsed_policy.worktree.files),
        remote=record.url if record is not None else "",
    )
