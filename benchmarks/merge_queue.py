"""Merge-queue overhead per merged unit, the verify commands themselves excluded.

* ``overhead_median_ms``: from a person's approval to the task done — the queue entry,
  the project and task row locks, the merge computed onto the current base, a scratch
  worktree of it added and removed, the gate's judgement of each verify command, the
  compare-and-swap of the base ref, the checked-out base refreshed, the transitions and
  the task's worktree removed — less the time the verify command (``true``) ran.
  Median over many units, merged one after another onto a base that moves each time.
  Target: under 2 s.
* ``direct_merge_median_ms``: the merge as it was before the queue (``merge_into_base``:
  merge-tree, commit-tree, compare-and-swap; no verification), on the same kind of
  branch, for comparison.
Needs team mode (DATABASE_URL from the environment or .sf/env); creates and deletes a
throw-away project.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from _common import django_team_mode, parse_args, percentile, report, throwaway_repo

django_team_mode()

from agents_app.models import AgentSession  # noqa: E402
from agents_app.services import project_create, session_create  # noqa: E402
from sf_core.actors import Actor  # noqa: E402
from tasks_app.engine import merge_queue  # noqa: E402
from tasks_app.engine.review import task_approve  # noqa: E402
from tasks_app.engine.worktrees import checkpoint_commit, merge_into_base, worktree_ensure  # noqa: E402
from tasks_app.models import Plan, Task  # noqa: E402
from tasks_app.schemas import plan_spec_parse  # noqa: E402
from tasks_app.services import plan_accept, plan_create  # noqa: E402
from tasks_app.workspaces import workspace_of  # noqa: E402


def setup(tmp: Path, count: int) -> tuple[Any, Plan]:
    (tmp / "repo").mkdir()
    repo = throwaway_repo((tmp / "repo").resolve())
    project = project_create(name=f"bench-mq-{uuid.uuid4().hex[:6]}", repo_path=str(repo))
    session = session_create(project=project, axes={"work_mode": "plan"})
    AgentSession.objects.filter(pk=session.pk).update(driver="inline")
    tasks = [
        {
            "key": f"t{i}",
            "title": f"write t{i}.txt",
            "acceptance_criteria": ["the file exists"],
            "verify": ["true"],
            "risk_level": "high",  # a person approves: nothing merges before we time it
        }
        for i in range(count)
    ]
    spec = plan_spec_parse({"summary": f"{count} small tasks", "tasks": tasks})
    plan = plan_create(session=session, spec=spec, source="api")
    plan_accept(plan=plan, actor=Actor.system("bench"), permission_profile="trusted", start=False)
    return project, plan


def in_review(task: Task) -> Task:
    """The task as its unit leaves it: a committed branch off the base, in review."""
    ws = workspace_of(task)
    worktree_ensure(ws)
    (ws.path / f"{task.key}.txt").write_text(f"{task.key}\n")
    commit = checkpoint_commit(ws, f"sf({task.key}): attempt 1")
    Task.objects.filter(pk=task.pk).update(status="review", checkpoint_ref=commit or "")
    task.refresh_from_db()
    return task


def timed_verify() -> list[float]:
    """Wrap the queue's verification to add up the seconds its commands ran."""
    spent: list[float] = []
    real = merge_queue.verify

    def verify(*args: Any, **kwargs: Any) -> Any:
        verification = real(*args, **kwargs)
        spent.append(sum(result.seconds for result in verification.results))
        return verification

    merge_queue.verify = verify  # type: ignore[assignment]
    return spent


def queue_overhead(tasks: list[Task]) -> tuple[list[float], list[float]]:
    spent = timed_verify()
    overheads, commands = [], []
    for task in tasks:
        task = in_review(task)
        before = len(spent)
        started = time.perf_counter()
        done = task_approve(task=task, actor=Actor.system("bench"))
        total = time.perf_counter() - started
        assert done.status == "done", (done.status, done.status_reason)
        command_s = sum(spent[before:])
        overheads.append((total - command_s) * 1000)
        commands.append(command_s * 1000)
    return overheads, commands


def direct_merges(tasks: list[Task]) -> list[float]:
    times = []
    for task in tasks:
        task = in_review(task)
        ws = workspace_of(task)
        started = time.perf_counter()
        result = merge_into_base(ws, commit=task.checkpoint_ref, message=f"merge {task.key}")
        times.append((time.perf_counter() - started) * 1000)
        assert result.merged, result.reason
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--units", type=int, default=15)
    args = parse_args(parser, smoke={"units": 2})
    with tempfile.TemporaryDirectory() as tmp:
        project, plan = setup(Path(tmp), 2 * args.units + 1)
        try:
            tasks = list(Task.objects.filter(plan=plan).order_by("position"))
            queue_overhead(tasks[:1])  # warm-up: imports, first connections
            overheads, commands = queue_overhead(tasks[1 : args.units + 1])
            direct = direct_merges(tasks[args.units + 1 :])
        finally:
            project.delete()
    figures = {
        "units": args.units,
        "overhead_median_ms": round(statistics.median(overheads), 1),
        "overhead_p90_ms": round(percentile(overheads, 0.9), 1),
        "verify_commands_median_ms": round(statistics.median(commands), 1),
        "direct_merge_median_ms": round(statistics.median(direct), 1),
        "target_ms": 2000,
    }
    for name, value in figures.items():
        print(f"{name}: {value}")
    report(figures)


if __name__ == "__main__":
    main()
