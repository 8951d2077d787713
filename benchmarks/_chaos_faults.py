"""The chaos benchmark's fault driver: one fault at a time, on a seeded schedule.

Every kind breaks something the benchmark started itself (``_chaos_infra``): a worker
process of ours killed with SIGKILL (then replaced), our private Redis killed and
started again (every queued message lost: no persistence), every PostgreSQL session
of our own database terminated (``pg_terminate_backend``), the fake provider
answering 429, 5xx or going silent for a while, a git lock file left behind as a
crashed git would leave it, and the worktree folder (a tmpfs) filled to the last byte
for a while. A fault is recorded with when it began and when it was cleared (the
same instant for a kill, a restart or a lock: nothing clears a lock but SF itself).
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from _chaos_infra import BenchDatabase, RedisServer, Tmpfs, Workers, log
from _chaos_provider import FALLBACK, PRIMARY, ChaosProvider
from django.utils import timezone

from tasks_app.models import TaskRuntime

KINDS = (
    "kill9",
    "redis_restart",
    "pg_terminate",
    "provider_429",
    "provider_5xx",
    "provider_timeout",
    "git_lock",
    "disk_full",
)


@dataclass
class Fault:
    kind: str
    started: datetime
    cleared: datetime
    detail: str


@dataclass
class FaultDriver:
    rng: random.Random
    workers: Workers
    redis: RedisServer
    database: BenchDatabase
    tmpfs: Tmpfs
    provider: ChaosProvider
    repos: list[Path]
    injected: list[Fault] = field(default_factory=list)
    locks: list[Path] = field(default_factory=list)
    _order: list[str] = field(default_factory=list)

    def next_kind(self) -> str:
        """Every kind once per round, in a shuffled order."""
        if not self._order:
            self._order = list(KINDS)
            self.rng.shuffle(self._order)
        return self._order.pop()

    def inject(self, kind: str) -> Fault:
        started = timezone.now()
        detail = getattr(self, f"_{kind}")()
        fault = Fault(kind, started, timezone.now(), detail)
        self.injected.append(fault)
        log(f"fault {len(self.injected)}: {kind} ({detail})")
        return fault

    def _window(self, low: float, high: float) -> float:
        return round(self.rng.uniform(low, high), 1)

    def _kill9(self) -> str:
        running = list(TaskRuntime.objects.values_list("worker", "task__key"))
        self.rng.shuffle(running)
        for hostname, key in running:
            worker = self.workers.by_hostname(hostname)
            if worker is not None and worker.process.poll() is None:
                self.workers.kill9(worker)
                return f"{hostname} running {key}"
        worker = self.rng.choice(self.workers.alive)
        self.workers.kill9(worker)
        return f"{worker.hostname}, idle"

    def _redis_restart(self) -> str:
        self.redis.kill()
        down = self._window(1, 4)
        time.sleep(down)
        self.redis.start()
        return f"down {down:g} s"

    def _pg_terminate(self) -> str:
        return f"{self.database.terminate()} backends terminated"

    def _provider(self, models: tuple[str, ...], fault: str, seconds: float) -> None:
        self.provider.set_fault(models, fault)
        try:
            time.sleep(seconds)
        finally:
            self.provider.clear()

    def _provider_429(self) -> str:
        seconds = self._window(5, 20)
        self._provider((PRIMARY, FALLBACK), "429", seconds)
        return f"429 for {seconds:g} s"

    def _provider_5xx(self) -> str:
        models = self.rng.choice(((PRIMARY,), (PRIMARY, FALLBACK)))
        seconds = self._window(5, 25)
        self._provider(models, "5xx", seconds)
        return f"503 from {'+'.join(models)} for {seconds:g} s"

    def _provider_timeout(self) -> str:
        seconds = self._window(5, 20)
        self._provider((PRIMARY,), "timeout", seconds)
        return f"{PRIMARY} silent for {seconds:g} s"

    def _git_lock(self) -> str:
        """A lock file as a git killed mid-command leaves it: the repository's index,
        the base branch's ref, or a running unit's worktree index."""
        repo = self.rng.choice(self.repos)
        choices = [repo / ".git" / "index.lock", repo / ".git" / "refs" / "heads" / "main.lock"]
        for path in TaskRuntime.objects.values_list("worktree_path", flat=True):
            gitfile = Path(path) / ".git"
            try:
                gitdir = gitfile.read_text().split("gitdir:", 1)[1].strip()
            except (OSError, IndexError):
                continue
            choices.append(Path(gitdir) / "index.lock")
        lock = self.rng.choice(choices)
        try:
            lock.write_text("")
        except OSError as exc:
            return f"could not leave {lock}: {exc}"
        self.locks.append(lock)
        return str(lock)

    def _disk_full(self) -> str:
        seconds = self._window(5, 20)
        written = self.tmpfs.fill()
        try:
            time.sleep(seconds)
        finally:
            self.tmpfs.free()
        return f"{self.tmpfs.path} full for {seconds:g} s ({written >> 20} MiB ballast)"

    def locks_left(self) -> list[str]:
        return [str(lock) for lock in self.locks if lock.exists()]
