"""Dispatch costs, with a replayed model (no LLM time) and a trivial verify command.

* ``unit_overhead_median_ms``: one unit end to end inline — claim, worktree, prompt,
  a replayed model step that writes a file and finishes, the gate and trace, the
  verify command, commit, review and the fail-closed merge — median over many units.
  Target: under 300 ms.
* ``unit_statements``, ``unit_commits``, ``unit_git``, ``unit_processes``: what one unit
  costs in SQL statements, transactions committed, git processes and other processes
  (the sandboxed commands), median over the same units: figures a busy machine does
  not blur.
* ``units_per_minute`` and ``lost``: 100 small tasks through 2 real Celery worker
  processes (solo pool) against PostgreSQL and Redis; every task must end done.
Needs team mode (DATABASE_URL and REDIS_URL from the environment or .sf/env);
creates and deletes throw-away projects.
"""

from __future__ import annotations

import argparse
import collections
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from _common import ROOT, django_team_mode, parse_args, report
from _processes import start, stop

django_team_mode()

from django.conf import settings  # noqa: E402
from django.db import connection  # noqa: E402
from django.db.backends.base.base import BaseDatabaseWrapper  # noqa: E402
from django.test.utils import override_settings  # noqa: E402

from agents_app.models import AgentSession  # noqa: E402
from agents_app.runtime.recording import trace_from_steps, trace_write  # noqa: E402
from agents_app.runtime.replay import replay_load  # noqa: E402
from agents_app.services import project_create, session_create  # noqa: E402
from sf_core.actors import Actor  # noqa: E402
from sf_core.queues import queues_served  # noqa: E402
from tasks_app.engine.dispatch import dispatch  # noqa: E402
from tasks_app.engine.replaying import demo_repo_create  # noqa: E402
from tasks_app.engine.unit import UnitOptions, unit_run  # noqa: E402
from tasks_app.models import Plan, Task, Worker  # noqa: E402
from tasks_app.schemas import plan_spec_parse  # noqa: E402
from tasks_app.services import plan_accept, plan_create  # noqa: E402


def small_plan(count: int) -> dict[str, object]:
    return {
        "summary": f"{count} small tasks",
        "tasks": [
            {
                "key": f"t{i}",
                "title": f"write t{i}.txt",
                "acceptance_criteria": ["the file exists"],
                "verify": ["true"],
                "risk_level": "low",
            }
            for i in range(count)
        ],
    }


def trace_for(tmp: Path) -> Path:
    """One trace for every task: it creates a uniquely named file (no merge conflicts)."""
    steps = [
        ("writing", [("run_command", {"command": "mktemp -p . out-XXXXXX"})]),
        ("done", [("finish", {"summary": "wrote a file"})]),
    ]
    return trace_write(
        tmp / "trace.jsonl", trace_from_steps(steps, header={"note": "benchmark"}, worktree=tmp)
    )


def setup(tmp: Path, name: str, count: int, *, driver: str) -> tuple[object, AgentSession, object]:
    repo = demo_repo_create(tmp / name)
    # Enough autonomous continuations for every task (the default limit pauses at 50).
    policy = {"budgets": {"max_autonomous_continues": count + 10}}
    project = project_create(
        name=f"bench-{name}-{uuid.uuid4().hex[:6]}", repo_path=str(repo), policy=policy
    )
    session = session_create(project=project, axes={"work_mode": "plan"})
    AgentSession.objects.filter(pk=session.pk).update(
        driver=driver, replay_trace=str(trace_for(tmp))
    )
    session.refresh_from_db()
    plan = plan_create(session=session, spec=plan_spec_parse(small_plan(count)), source="api")
    plan_accept(
        plan=plan,
        actor=Actor.system("bench"),
        autonomous=True,
        permission_profile="trusted",
        start=False,
    )
    return project, session, plan


class UnitCounts:
    """Counts what the unit being measured does: SQL statements, commits, processes."""

    def __init__(self) -> None:
        self.on = False
        self.counts: collections.Counter[str] = collections.Counter()
        sys.addaudithook(self._audit)
        original = BaseDatabaseWrapper.commit

        def commit(wrapper: BaseDatabaseWrapper) -> None:
            self.counts["commits"] += self.on
            original(wrapper)

        BaseDatabaseWrapper.commit = commit  # type: ignore[method-assign]

    def _audit(self, event: str, args: tuple[object, ...]) -> None:
        if self.on and event == "subprocess.Popen":
            program = str(args[1][0]) if args[1] else ""  # type: ignore[index]
            self.counts["git" if program.endswith("git") else "processes"] += 1

    def statement(self, execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        if self.on:
            self.counts["statements"] += 1
            autocommitted = not connection.in_atomic_block
            self.counts["commits"] += autocommitted and sql.split()[0] in WRITES
        return execute(sql, params, many, context)

    def take(self) -> dict[str, int]:
        taken, self.counts = dict(self.counts), collections.Counter()
        return taken


WRITES = ("INSERT", "UPDATE", "DELETE")


def unit_overhead(tmp: Path, units: int) -> tuple[list[float], list[dict[str, int]]]:
    project, session, plan = setup(tmp, "inline", units + 1, driver="inline")
    times, counted, counts = [], [], UnitCounts()
    try:
        with connection.execute_wrapper(counts.statement):
            for task in Task.objects.filter(plan=plan).order_by("position"):
                options = UnitOptions(replay=replay_load(session.replay_trace))
                counts.on = True
                started = time.perf_counter()
                report_ = unit_run(task_id=task.pk, worker="bench", options=options)
                times.append((time.perf_counter() - started) * 1000)
                counts.on = False
                counted.append(counts.take())
                assert report_ is not None, "the unit did not run"
                assert report_.task_status == "done", report_
        # The first pays for importing litellm; the last also ends the plan and session.
        return times[1:-1], counted[1:-1]
    finally:
        project.delete()


def start_workers(queue: str, count: int) -> list[subprocess.Popen[bytes]]:
    """``count`` solo-pool Celery worker processes on their own queues."""
    env = {
        **os.environ,
        "SF_CELERY_QUEUE": queue,
        "SF_SWEEP_INTERVAL": "1s",
        "SF_WORKER_HEARTBEAT": "1s",
    }
    command = [sys.executable, "-m", "celery", "-A", "sf_web", "worker", "--pool=solo"]
    quiet = ["--without-gossip", "--without-mingle", "--loglevel=WARNING"]
    return [
        start(
            [*command, "-Q", queues_served(queue), "-n", f"{queue}-{n}@bench", *quiet],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for n in range(count)
    ]


def wait_for_plan(plan: Plan, timeout_s: float = 1800) -> None:
    """Until no task of ``plan`` is still open (or the timeout)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        open_tasks = (
            Task.objects.filter(plan=plan)
            .exclude(status__in=["done", "failed", "blocked", "cancelled"])
            .count()
        )
        if open_tasks == 0:
            return
        time.sleep(0.5)


def live_lost(queue: str) -> dict[str, int]:
    """The workers' live updates so far (their heartbeat writes them): sent, dropped by a
    full lane, refused by Redis. Before the bounded sender, a refusal was the
    ``MaxConnectionsError`` [8/8] saw; now none should happen at all."""
    time.sleep(2)  # one more heartbeat (1 s here) after the last unit
    rows = Worker.objects.filter(hostname__startswith=f"{queue}-")
    return {
        "live_sent": sum(w.live_sent for w in rows),
        "live_dropped": sum(w.live_dropped for w in rows),
        "live_failed": sum(w.live_failed for w in rows),
    }


def through_workers(tmp: Path, count: int, workers: int) -> tuple[float, int, dict[str, int]]:
    # Driven inline until the clock starts: the workers' sweep dispatches a worker-driven
    # session's ready tasks on its own, which ran a small plan before it was timed.
    project, session, plan = setup(tmp, "workers", count, driver="inline")
    queue = f"bench-{uuid.uuid4().hex[:8]}"
    procs = start_workers(queue, workers)
    try:
        time.sleep(8)  # let the workers import everything before the clock starts
        started = time.perf_counter()
        AgentSession.objects.filter(pk=session.pk).update(driver="workers")
        with override_settings(CELERY_TASK_DEFAULT_QUEUE=queue):
            dispatch(session_id=session.pk)
        wait_for_plan(plan)
        elapsed = time.perf_counter() - started
        lost = Task.objects.filter(plan=plan).exclude(status="done").count()
        return count / (elapsed / 60), lost, live_lost(queue)
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            stop(proc, grace=30)  # SIGKILL if it is still in a unit then
        project.delete()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--units", type=int, default=20)
    parser.add_argument("--tasks", type=int, default=100)
    parser.add_argument("--workers", type=int, default=2)
    args = parse_args(parser, smoke={"units": 1, "tasks": 2, "workers": 1})
    assert not settings.CELERY_TASK_ALWAYS_EAGER, "needs REDIS_URL (team mode)"
    with tempfile.TemporaryDirectory() as tmp:
        overhead, counted = unit_overhead(Path(tmp), args.units + 1)
        per_minute, lost, live = through_workers(Path(tmp), args.tasks, args.workers)
    median = statistics.median(overhead)
    per_unit = {
        name: statistics.median(c.get(name, 0) for c in counted)
        for name in ("statements", "commits", "git", "processes")
    }
    print(f"unit overhead over {len(overhead)} units: median {median:.0f} ms")
    print("one unit, median: " + ", ".join(f"{v:g} {k}" for k, v in per_unit.items()))
    print(f"{args.tasks} tasks through {args.workers} workers: {per_minute:.1f} units/min")
    print(f"not done: {lost}")
    print(f"the workers' live updates: {live}")
    report(
        {
            "unit_overhead_median_ms": round(median, 1),
            **{f"unit_{name}": value for name, value in per_unit.items()},
            "units_per_minute": round(per_minute, 1),
            "lost": lost,
            **live,
        }
    )


if __name__ == "__main__":
    main()
