"""One chaos run: the projects, sessions and plans, the workers, the fault schedule,
the wait for every task to end, and the figures (``chaos.py`` sets the stage)."""

from __future__ import annotations

import argparse
import random
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from _chaos_faults import KINDS, FaultDriver
from _chaos_infra import log, wait_until
from _chaos_provider import FALLBACK, PRIMARY, ChaosProvider
from _chaos_results import (
    by_kind,
    judge,
    merge_counts,
    open_count,
    p95,
    recoveries,
    status_counts,
    unit_summary,
)
from django.utils import timezone

from agents_app.models import AgentSession
from agents_app.runtime.recording import trace_from_steps, trace_write
from agents_app.services import project_create, session_create
from sf_core.actors import Actor
from tasks_app.engine.dispatch import dispatch
from tasks_app.engine.replaying import demo_repo_create
from tasks_app.models import Worker
from tasks_app.schemas import plan_spec_parse
from tasks_app.services import plan_accept, plan_create

# The replayed unit's file has a random name (mktemp): its branch must change something.
REPLAY_VERIFY = 'test -n "$(git diff --name-only main...HEAD)"'


def _model(provider: ChaosProvider, name: str) -> dict[str, Any]:
    return {
        "model": f"openai/{name}",
        "api_base": provider.openai_base,
        "tool_calls": "native",
        "context_window": 32768,
    }


def _policy(provider: ChaosProvider, units: int) -> dict[str, Any]:
    primary = _model(provider, PRIMARY)
    free = {"input_per_token": "0", "output_per_token": "0"}
    return {
        # Every unit of a session counts against its continuation limit (default 50).
        "budgets": {"max_autonomous_continues": 10 * units + 100},
        "models": {
            "fast": primary,
            "smart": primary,
            "deep": primary,
            "fallback": _model(provider, FALLBACK),
        },
        "prices": {f"openai/{PRIMARY}": free, f"openai/{FALLBACK}": free},
    }


@dataclass
class Run:
    args: argparse.Namespace
    rng: random.Random
    infra: Any
    provider: ChaosProvider
    plan_ids: list[int] = field(default_factory=list)
    session_ids: list[int] = field(default_factory=list)
    doomed: set[str] = field(default_factory=set)
    repos: list[Any] = field(default_factory=list)

    def build_world(self) -> None:
        tmp = self.infra.tmp
        self.repos = [demo_repo_create(tmp / f"repo{n}") for n in range(self.args.projects)]
        projects = [
            project_create(
                name=f"chaos-{n}-{uuid.uuid4().hex[:6]}",
                repo_path=str(repo),
                policy=_policy(self.provider, self.args.session_size),
            )
            for n, repo in enumerate(self.repos)
        ]
        keys = [f"t{n:04d}" for n in range(self.args.units)]
        doomed = max(1, round(self.args.units * self.args.doomed)) if self.args.doomed else 0
        self.doomed = set(self.rng.sample(keys, doomed))
        trace = self._replay_trace()
        size = self.args.session_size
        for index, start in enumerate(range(0, len(keys), size)):
            live = index % 2 == 1
            project = projects[index % len(projects)]
            self._session(project, keys[start : start + size], None if live else trace)
        log(f"{len(keys)} tasks in {len(self.session_ids)} sessions, {doomed} doomed")

    def _replay_trace(self) -> str:
        """Every replayed unit makes a file of its own (no merge conflicts) and finishes."""
        steps = [
            ("writing", [("run_command", {"command": "mktemp -p . out-XXXXXX"})]),
            ("done", [("finish", {"summary": "wrote a file"})]),
        ]
        tmp = self.infra.tmp
        records = trace_from_steps(steps, header={"note": "chaos benchmark"}, worktree=tmp)
        return str(trace_write(tmp / "trace.jsonl", records))

    def _task(self, key: str, replayed: bool) -> dict[str, Any]:
        if key in self.doomed:
            verify = f"test -f {key}.never"
        else:
            verify = REPLAY_VERIFY if replayed else f"test -f {key}.txt"
        return {
            "key": key,
            "title": f"write {key}.txt",
            "description": "Create the file.",
            "acceptance_criteria": ["the file exists"],
            "verify": [verify],
            "risk_level": "low",
            "max_retries": 1 if key in self.doomed else 3,
        }

    def _session(self, project: Any, keys: list[str], trace: str | None) -> None:
        session = session_create(project=project, axes={"work_mode": "plan"})
        AgentSession.objects.filter(pk=session.pk).update(
            driver="workers", replay_trace=trace or ""
        )
        session.refresh_from_db()
        spec = {"summary": "chaos", "tasks": [self._task(k, trace is not None) for k in keys]}
        plan = plan_create(session=session, spec=plan_spec_parse(spec), source="api")
        plan_accept(
            plan=plan,
            actor=Actor.system("chaos"),
            autonomous=True,
            permission_profile="trusted",
            start=False,
        )
        self.plan_ids.append(plan.pk)
        self.session_ids.append(session.pk)

    def go(self) -> dict[str, Any]:
        workers = self.infra.workers
        for _ in range(self.args.workers):
            workers.start_one()
        wait_until(
            lambda: Worker.objects.filter(stopped_at__isnull=True).count() >= self.args.workers,
            timeout=180,
            what="the workers to register",
        )
        driver = FaultDriver(
            rng=self.rng,
            workers=workers,
            redis=self.infra.redis,
            database=self.infra.database,
            tmpfs=self.infra.tmpfs,
            provider=self.provider,
            repos=self.repos,
        )
        started = time.monotonic()
        for session_id in self.session_ids:
            dispatch(session_id=session_id)
        faults_stopped = self._loop(driver, started)
        duration = time.monotonic() - started
        return self._figures(driver, duration, faults_stopped - started)

    def _loop(self, driver: FaultDriver, started: float) -> float:
        """Inject faults until ``--stop-at`` of the tasks ended, then wait for the rest
        (or the deadline). Returns when the faults stopped."""
        total = self.args.units
        next_fault = started + self.args.warmup
        stopped: float | None = None
        last_log = 0.0
        while True:
            now = time.monotonic()
            left = open_count(self.plan_ids)
            if now - last_log >= 10:
                last_log = now
                log(f"{now - started:.0f}s: {status_counts(self.plan_ids)}")
            if stopped is None and (total - left) >= self.args.stop_at * total:
                stopped = now
                log(f"faults stop: {left} tasks open, {len(driver.injected)} faults injected")
            if stopped is not None and (left == 0 or now - stopped > self.args.deadline):
                return stopped
            if stopped is None and now >= next_fault:
                driver.inject(driver.next_kind())
                next_fault = time.monotonic() + self.args.fault_every * self.rng.uniform(0.5, 1.5)
            time.sleep(0.5)

    def _figures(self, driver: FaultDriver, duration: float, faulty: float) -> dict[str, Any]:
        merges = merge_counts(self.repos)
        verdicts = judge(self.plan_ids, self.doomed, merges)
        measured, unrecovered = recoveries(driver.injected, self.plan_ids)
        waits = [seconds for _, seconds in measured]
        units = self.args.units
        failures = len(verdicts.system) + len(verdicts.lost)
        kinds = {kind: sum(f.kind == kind for f in driver.injected) for kind in KINDS}
        return {
            "units": units,
            "units_run": sum(unit_summary(self.plan_ids).values()),
            "unit_statuses": unit_summary(self.plan_ids),
            "task_statuses": status_counts(self.plan_ids),
            "workers": self.args.workers,
            "seed": self.args.seed,
            "system_failures": failures,
            "system_failures_per_1000": round(failures * 1000 / units, 2),
            "lost": len(verdicts.lost),
            "merged_twice": len(verdicts.merged_twice),
            "doomed_ended_by_task": verdicts.model,
            "recovery_p95_s": p95(waits),
            "recovery_p50_s": round(sorted(waits)[len(waits) // 2], 1) if waits else None,
            "recovery_unfollowed_units": unrecovered,
            "recovery_by_kind": by_kind(measured),
            "faults": kinds,
            "locks_left": len(driver.locks_left()),
            "duration_s": round(duration, 1),
            "faults_window_s": round(faulty, 1),
            "system_failure_reasons": verdicts.system[:30],
            "lost_tasks": verdicts.lost[:30],
            "provider_answers": dict(self.provider.answered),
            "finished_at": timezone.now().isoformat(timespec="seconds"),
        }
