"""A task is merged onto its base branch once, however often its entry runs.

After a broker loss the lane of a project can run twice for the same entry (a message
redelivered or sent again by the sweep while the first run still works, a lane lock
lost with its connection), and a task the merge queue sent back comes back with the
failed candidate in its branch. Each must leave one ``sf: merge <key>`` commit on the
base branch, the entry settled once and the task done once (issue 33: "nothing may be
lost or merged twice"). No timing: each interleaving is laid out step by step.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tasks_app.engine import merge_queue
from tasks_app.engine.merge_queue import merge_enqueue, merge_queue_run
from tasks_app.engine.review import task_approve
from tasks_app.engine.worktrees import merge_compute
from tasks_app.models import MergeRequest, MergeStatus, Task, TaskStatus, TaskTransition
from tasks_app.tests.test_engine import git
from tasks_app.tests.test_merge_queue import PERSON, both_in_review, repo, run, writes
from tasks_app.workspaces import workspace_of

pytestmark = pytest.mark.django_db
__all__ = ["repo"]  # the fixture, shared with the merge queue's tests


def merges(repo: Path, key: str) -> list[str]:
    subjects = git(repo, "log", "--format=%s", "main").splitlines()
    return [line for line in subjects if line.startswith(f"sf: merge {key}:")]


def done_once(task: Task) -> bool:
    return TaskTransition.objects.filter(task=task, to_status=TaskStatus.DONE).count() == 1


def queued(repo: Path) -> tuple[Task, MergeRequest]:
    """The rename task in review with its entry queued, and the entry as a run read it."""
    task = both_in_review(repo).tasks.get(key="rename")
    entry = merge_enqueue(task=task, actor=PERSON)
    return task, MergeRequest.objects.select_related("task__plan", "actor_user").get(pk=entry.pk)


def test_a_second_run_that_verified_before_the_first_published_publishes_nothing(
    repo: Path,
) -> None:
    task, second = queued(repo)
    project = second.project
    ws = workspace_of(task)
    # The second run computes and verifies the same merge while the entry is active...
    candidate = merge_compute(ws, commit=second.commit, message=f"sf: merge {task.key}: x")
    merge_queue._verify_candidate(second, second.task, ws, candidate, project)
    # ...the first run merges it meanwhile...
    assert merge_queue_run(project_id=project.pk) == 1
    entry = MergeRequest.objects.get(pk=second.pk)
    assert entry.status == MergeStatus.MERGED
    # ...and the second run's publish finds the entry settled: nothing moves, nothing
    # is rewritten (before: the entry was marked refused, "the task became done").
    assert merge_queue._publish(second, second.task, ws, candidate) is True
    again = MergeRequest.objects.get(pk=second.pk)
    assert (again.status, again.reason, again.merge_commit) == (
        entry.status,
        entry.reason,
        entry.merge_commit,
    )
    assert git(repo, "rev-parse", "main").strip() == entry.merge_commit
    assert len(merges(repo, "rename")) == 1
    task.refresh_from_db()
    assert task.status == TaskStatus.DONE
    assert done_once(task)


def test_a_redelivered_run_of_a_merged_entry_settles_nothing(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    task, stale = queued(repo)
    assert merge_queue_run(project_id=stale.project_id) == 1
    entry = MergeRequest.objects.get(pk=stale.pk)
    # A run that read the entry (and its task in review) before the first settled it,
    # as a lost lane lock lets one: the lane hands it the stale row once.
    rows: list[Any] = [stale]
    monkeypatch.setattr(merge_queue, "_next_entry", lambda project: rows.pop() if rows else None)
    merge_queue_run(project_id=stale.project_id)  # before: InvalidTransition (done → done)
    again = MergeRequest.objects.get(pk=stale.pk)
    assert (again.status, again.reason, again.merge_commit) == (
        MergeStatus.MERGED,
        entry.reason,
        entry.merge_commit,
    )
    assert len(merges(repo, "rename")) == 1
    assert done_once(task)


def test_a_merge_that_landed_without_its_row_is_recorded_not_merged_again(repo: Path) -> None:
    task, entry = queued(repo)
    ws = workspace_of(task)
    candidate = merge_compute(ws, commit=entry.commit, message=f"sf: merge {task.key}: x")
    git(repo, "update-ref", "refs/heads/main", candidate.commit)  # the process died here
    assert merge_queue_run(project_id=entry.project_id) == 1
    entry.refresh_from_db()
    assert (entry.status, entry.reason) == (MergeStatus.MERGED, "already merged")
    assert git(repo, "rev-parse", "main").strip() == candidate.commit
    assert len(merges(repo, "rename")) == 1
    task.refresh_from_db()
    assert task.status == TaskStatus.DONE
    assert done_once(task)


def test_a_task_sent_back_by_the_queue_is_merged_once(repo: Path) -> None:
    plan = both_in_review(repo)
    rename, caller = plan.tasks.get(key="rename"), plan.tasks.get(key="caller")
    assert task_approve(task=rename, actor=PERSON).status == "done"
    assert task_approve(task=caller, actor=PERSON).status == "retrying"
    fixed = writes("app.py", "import lib\nprint(lib.salute('x'))\n")
    assert run(caller, fixed).task_status == "review"
    assert task_approve(task=caller, actor=PERSON).status == "done"
    # The failed candidate reached main through the caller's branch: under its own
    # words, not as a second merge of the caller (before: two "sf: merge caller").
    assert len(merges(repo, "caller")) == 1
    subjects = git(repo, "log", "--format=%s", "main").splitlines()
    assert "sf(caller): main merged in; the merged tree failed verification" in subjects
