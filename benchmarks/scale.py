"""Scale-out: units per minute with 1, 2 and 4 worker processes on two worker hosts that
share no disk (tests/hosts.py: each host a directory of its own and Celery workers in a
mount namespace where the other host's directory is hidden; one PostgreSQL, one Redis;
the project's repository of record a bare repository reached by a ``file://`` URL).

The model is a scripted provider that answers each step after ``--delay`` seconds (a
real model's answer takes seconds): each unit asks twice (write the task's file, then
finish), so on this 2-core machine the figure measures how well the engine keeps many
units in flight, not how fast the cores are. For each worker count a fresh project of
``--tasks`` independent tasks is accepted and timed until every task has ended.

Last line, JSON: ``units_per_min_1``, ``_2``, ``_4``, ``ratio_4_vs_1`` (target >= 2.5),
``lost`` (tasks not done, over all runs) and ``merged_twice`` (tasks whose merge is on
the record's main more than once); both must be 0. Needs team mode (PostgreSQL and
Redis: DATABASE_URL and REDIS_URL, or .sf/env), root or user namespaces for ``unshare``.
"""

from __future__ import annotations

import argparse
import collections
import os
import subprocess
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from _common import django_team_mode, parse_args, report

django_team_mode()

from django.conf import settings  # noqa: E402
from django.test.utils import override_settings  # noqa: E402

from agents_app.services import project_create, session_create  # noqa: E402
from sf_core.actors import Actor  # noqa: E402
from tasks_app.engine.replaying import demo_repo_create  # noqa: E402
from tasks_app.models import Plan, Task, Worker  # noqa: E402
from tasks_app.schemas import plan_spec_parse  # noqa: E402
from tasks_app.services import plan_accept, plan_create  # noqa: E402
from tests.hosts import Hosts, ScriptedProvider, bare_record, provider_policy, task_specs  # noqa: E402
from tests.processes import wait_for  # noqa: E402

TIMING = {
    "SF_WORKER_HEARTBEAT": "1s",
    "SF_WORKER_STALE_AFTER": "6s",
    "SF_SWEEP_INTERVAL": "2s",
    "SF_REDISPATCH_AFTER": "15s",
}
ENDED = ("done", "failed", "blocked", "cancelled")


def one_run(tmp: Path, workers: int, args: argparse.Namespace) -> dict[str, Any]:
    """``workers`` processes spread over the two hosts, ``args.tasks`` tasks: timed."""
    root = tmp / f"w{workers}"
    repo = demo_repo_create(root / "repo")
    url = bare_record(repo, root / "record.git")
    # One prefix for every run: the workers read the earlier runs' projects too.
    prefix = f"file://{tmp}/"
    settings.SF_RECORD_URL_PREFIXES = [prefix]
    provider = ScriptedProvider(delay=args.delay).start()
    hosts = Hosts(root=root, hidden=[repo], env={**TIMING, "SF_RECORD_URL_PREFIXES": prefix})
    try:
        started = hosts.spread(workers)
        names = [worker.hostname for worker in started]
        alive = Worker.objects.filter(hostname__in=names, stopped_at__isnull=True)
        wait_for(lambda: alive.count() == workers, timeout=600, what=f"{workers} workers")
        plan, began = _accepted(provider, repo, url, hosts.queue, args.tasks), time.monotonic()
        open_tasks = Task.objects.filter(plan=plan).exclude(status__in=ENDED)
        wait_for(lambda: not open_tasks.exists(), timeout=args.timeout, what="every task")
        seconds = time.monotonic() - began
    finally:
        hosts.stop_all()
        provider.stop()
    return _figures(plan, root / "record.git", seconds, workers, provider.answered)


def _accepted(provider: ScriptedProvider, repo: Path, url: str, queue: str, tasks: int) -> Plan:
    with override_settings(CELERY_TASK_DEFAULT_QUEUE=queue):
        project = project_create(
            name=f"scale-{uuid.uuid4().hex[:8]}",
            repo_path=str(repo),
            policy=provider_policy(provider, url, tasks),
        )
        session = session_create(project=project, axes={"work_mode": "plan"})
        spec = plan_spec_parse({"summary": "scale", "tasks": task_specs(tasks)})
        plan = plan_create(session=session, spec=spec, source="api")
        plan_accept(
            plan=plan, actor=Actor.system("bench"), autonomous=True, permission_profile="trusted"
        )
    return plan


def _figures(plan: Plan, record: Path, seconds: float, workers: int, asked: int) -> dict[str, Any]:
    statuses = collections.Counter(Task.objects.filter(plan=plan).values_list("status", flat=True))
    log = subprocess.run(
        ["git", "log", "--format=%s", "main"], cwd=record, capture_output=True, text=True
    ).stdout
    landed = collections.Counter(line for line in log.splitlines() if line.startswith("sf: merge"))
    done = statuses.get("done", 0)
    figures = {
        "workers": workers,
        "seconds": round(seconds, 1),
        "units_per_min": round(done / (seconds / 60), 1),
        "statuses": dict(statuses),
        "model_requests": asked,
        "lost": sum(statuses.values()) - done,
        "merged_twice": sum(1 for count in landed.values() if count > 1),
    }
    print(figures, flush=True)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=16, help="tasks per worker count")
    parser.add_argument("--delay", type=float, default=3.0, help="seconds per model answer")
    parser.add_argument("--counts", default="1,2,4", help="worker process counts")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per run")
    args = parse_args(parser, smoke={"tasks": 2, "delay": 0.2, "counts": "2", "timeout": 600})
    counts = [int(c) for c in args.counts.split(",")]
    load = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="sf-scale-") as tmp:
        runs = {n: one_run(Path(tmp), n, args) for n in counts}
    rates = {n: run["units_per_min"] for n, run in runs.items()}
    figures: dict[str, Any] = {f"units_per_min_{n}": rate for n, rate in rates.items()}
    ratio = rates[4] / rates[1] if 4 in rates and 1 in rates and rates[1] else None
    figures |= {
        "ratio_4_vs_1": round(ratio, 2) if ratio is not None else None,
        "target_ratio_4_vs_1": 2.5,
        "lost": sum(run["lost"] for run in runs.values()),
        "merged_twice": sum(run["merged_twice"] for run in runs.values()),
        "tasks": args.tasks,
        "delay_s": args.delay,
        "load_before": [round(x, 2) for x in load],
        "load_after": [round(x, 2) for x in os.getloadavg()],
    }
    report(figures)


if __name__ == "__main__":
    main()
