"""Reliability under injected faults: many units on real workers while a driver breaks
things on a schedule (issue [8/8]).

``--units`` tasks (1,000 by default) in sessions of ``--session-size``, half of them
answered by a recorded trace (the replay provider), half by a fake model provider over
real HTTP (``_chaos_provider``), each with a small real verify command; ``--doomed``
of them have a verify command that can never pass (the task's fault, on purpose).
``--workers`` solo-pool Celery workers run them against PostgreSQL and Redis, with
real git worktrees and merges, while ``_chaos_faults`` injects, one at a time every
``--fault-every`` seconds: worker ``kill -9``, a Redis restart, ``pg_terminate_backend``
of every session of the benchmark's database, the provider answering 429 / 5xx /
nothing, a git lock file left behind, the worktree folder full. Faults stop once
``--stop-at`` of the tasks have ended; the run waits ``--deadline`` seconds more.

Figures (``_chaos_results`` says how each end is judged): ``system_failures_per_1000``
(a task that ended failed, blocked, cancelled or lost for a reason that is not the
model's or the task's), ``lost``, ``merged_twice``, ``recovery_p95_s`` (fault cleared →
the unit running again). Target: 0 lost, 0 merged twice, ≤ 1 system failure per 1,000.

Everything it breaks is its own (``_chaos_infra``): a throw-away database, a private
redis-server, a tmpfs it mounts (root), the workers it starts; all removed at the end.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import shutil
import sys
import tempfile
import time
import uuid
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _chaos_infra import (
    DRIVER_APP,
    WORKER_APP,
    BenchDatabase,
    RedisServer,
    Tmpfs,
    Workers,
    log,
    signals_unwind,
)
from _common import ROOT, report
from _common import parse_args as parse_with_smoke

from sf_core.env import env_file_load_checkout

# The engine's clocks for this run (the defaults suit production: 10 s heartbeats, a
# worker stale after 30 s, a sweep every 15 s, a lost message resent after 60 s, a
# model silent for 10 min): shorter, so that a run of 1,000 units ends within the hour.
TIMING = {
    "SF_WORKER_HEARTBEAT": "1s",
    "SF_WORKER_STALE_AFTER": "6s",
    "SF_SWEEP_INTERVAL": "2s",
    "SF_REDISPATCH_AFTER": "15s",
    "SF_UNIT_IDLE_TIMEOUT": "8s",
    # The data directory is a 64 MiB tmpfs: the doctor's free-space thresholds (2 GiB
    # warning, 256 MiB error, for real disks) scaled to it, so that only the disk-full
    # fault (filled to the last byte) trips the pre-dispatch health gate.
    "SF_DOCTOR_DISK_WARNING_MIB": "16",
    "SF_DOCTOR_DISK_ERROR_MIB": "4",
}
STALL_S = 12.0  # a provider "timeout": silent for longer than SF_UNIT_IDLE_TIMEOUT


@dataclass
class Infra:
    tmp: Path
    database: BenchDatabase
    redis: RedisServer
    tmpfs: Tmpfs
    workers: Workers


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--units", type=int, default=1000, help="tasks to run")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--session-size", type=int, default=50)
    parser.add_argument("--projects", type=int, default=2, help="repositories")
    parser.add_argument("--doomed", type=float, default=0.01, help="share failing on purpose")
    parser.add_argument("--fault-every", type=float, default=20.0, help="seconds, on average")
    parser.add_argument("--warmup", type=float, default=15.0, help="seconds before the first")
    parser.add_argument("--stop-at", type=float, default=0.9, help="share ended: faults stop")
    parser.add_argument("--deadline", type=float, default=600.0, help="seconds after faults")
    parser.add_argument("--disk-mb", type=int, default=64, help="the worktree tmpfs's size")
    parser.add_argument("--keep", action="store_true", help="keep the files and the database")
    parser.add_argument(
        "--copy-database",
        action="store_true",
        help="start from a copy of DATABASE_URL's database (migrated, no other session on "
        "it) rather than migrating an empty one; --smoke does, on the test's own copy",
    )
    smoke = {"units": 2, "workers": 1, "session_size": 2, "projects": 1, "doomed": 0.0}
    smoke |= {"fault_every": 3.0, "warmup": 0.0, "deadline": 60.0, "copy_database": True}
    return parse_with_smoke(parser, smoke=smoke)


def prepare(stack: contextlib.ExitStack, args: argparse.Namespace) -> Infra:
    """Start what the faults break, point this process at it, set Django up."""
    env_file_load_checkout(ROOT)
    base_url = os.environ.get("DATABASE_URL")
    if not base_url:
        sys.exit("chaos.py needs PostgreSQL: DATABASE_URL or .sf/env (scripts/setup.sh)")
    tmp = Path(tempfile.mkdtemp(prefix="sf-chaos-"))
    if not args.keep:
        stack.callback(shutil.rmtree, tmp, ignore_errors=True)
    database = BenchDatabase(base_url)
    database.create(copy=args.copy_database)
    if not args.keep:
        stack.callback(database.drop)
    redis = RedisServer(tmp / "redis")
    redis.start()
    stack.callback(redis.stop)
    tmpfs = Tmpfs(tmp / "data", args.disk_mb)
    tmpfs.mount()
    stack.callback(tmpfs.unmount)
    queue = f"chaos-{uuid.uuid4().hex[:8]}"
    os.environ.update(
        DATABASE_URL=database.url(DRIVER_APP),
        REDIS_URL=redis.url,
        SF_DATA_DIR=str(tmpfs.path),
        SF_CELERY_QUEUE=queue,
        SF_CHANNELS_PREFIX=queue,
        DJANGO_SETTINGS_MODULE="sf_web.settings",
        **TIMING,
    )
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    env = {**os.environ, "DATABASE_URL": database.url(WORKER_APP), "PYTHONUNBUFFERED": "1"}
    workers = Workers(root=ROOT, queue=queue, env=env, log_dir=tmp / "logs")
    stack.callback(workers.stop_all)
    log(f"database {database.name}, redis :{redis.port}, tmpfs {tmpfs.path}, queue {queue}")
    return Infra(tmp, database, redis, tmpfs, workers)


def main() -> None:
    args = parse_args()
    rng = random.Random(args.seed)
    with signals_unwind(), contextlib.ExitStack() as stack:
        infra = prepare(stack, args)
        from _chaos_provider import ChaosProvider
        from _chaos_run import Run

        provider = ChaosProvider(stall_s=STALL_S).start()
        stack.callback(provider.stop)
        run = Run(args=args, rng=rng, infra=infra, provider=provider)
        run.build_world()
        figures = run.go()
    print_figures(figures)


def print_figures(figures: dict[str, Any]) -> None:
    for key in ("system_failure_reasons", "lost_tasks"):
        for line in figures.pop(key):
            print(f"  {key[:-1] if key.endswith('s') else key}: {line}")
    faults: Counter[str] = Counter(figures["faults"])
    print(f"faults injected: {sum(faults.values())} ({dict(sorted(faults.items()))})")
    print(
        f"{figures['units']} tasks, {figures['units_run']} units; "
        f"system failures {figures['system_failures']} "
        f"({figures['system_failures_per_1000']} per 1,000), lost {figures['lost']}, "
        f"merged twice {figures['merged_twice']}, recovery p95 {figures['recovery_p95_s']} s"
    )
    report(figures)


if __name__ == "__main__":
    time.tzset()
    main()
