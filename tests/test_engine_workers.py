"""The engine on real Celery worker processes: end to end, kill -9, a Redis restart.

Every unit answers from a recorded trace (the LLM is the one thing simulated); the
tool calls run for real in git worktrees, verify commands run, merges are real.
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from django.test import override_settings

from agents_app.models import AgentSession
from agents_app.runtime.recording import trace_from_steps, trace_write
from agents_app.services import project_create, session_create
from sf_core.actors import Actor
from tasks_app.engine.replaying import demo_repo_create
from tasks_app.models import Plan, Task, Unit
from tasks_app.schemas import plan_spec_parse
from tasks_app.services import plan_accept, plan_create
from tests.fixtures import HANDWRITTEN_DEMO_TRACE
from tests.processes import WorkerProcess, free_port, wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]
FAST = {
    "SF_WORKER_HEARTBEAT": "1s",
    "SF_WORKER_STALE_AFTER": "4s",
    "SF_SWEEP_INTERVAL": "1s",
    "SF_REDISPATCH_AFTER": "3s",
}
FINAL = ("done", "failed", "cancelled", "blocked")


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, check=True
    ).stdout


def slow_trace(tmp: Path, key: str, seconds: int) -> Path:
    """A unit that runs a slow command, writes its file, checks it and finishes."""
    steps = [
        ("working", [("run_command", {"command": f"sleep {seconds}"})]),
        ("writing", [("write_file", {"path": f"{key}.txt", "content": f"{key}\n"})]),
        ("done", [("finish", {"summary": f"wrote {key}.txt"})]),
    ]
    return trace_write(
        tmp / f"{key}.jsonl", trace_from_steps(steps, header={"note": "test fixture"}, worktree=tmp)
    )


def one_task_session(
    project: Any, key: str, trace: Path, *, start: bool
) -> tuple[AgentSession, Plan]:
    session = session_create(project=project, title=key, axes={"work_mode": "plan"})
    AgentSession.objects.filter(pk=session.pk).update(replay_trace=str(trace))
    spec = plan_spec_parse(
        {
            "summary": key,
            "tasks": [
                {
                    "key": key,
                    "title": f"write {key}.txt",
                    "acceptance_criteria": [f"{key}.txt exists"],
                    "verify": [f"test -f {key}.txt"],
                    "risk_level": "low",
                }
            ],
        }
    )
    plan = plan_create(session=session, spec=spec, source="api")
    plan_accept(
        plan=plan,
        actor=Actor.system("test"),
        autonomous=True,
        permission_profile="trusted",
        start=start,
    )
    return session, plan


def statuses(project: Any) -> dict[str, str]:
    return dict(Task.objects.filter(plan__session__project=project).values_list("key", "status"))


def merges(repo: Path) -> list[str]:
    return [
        line
        for line in git(repo, "log", "--format=%s", "main").splitlines()
        if line.startswith("sf: merge")
    ]


def test_plan_to_merged_commit_on_a_worker(tmp_path: Path) -> None:
    repo = demo_repo_create(tmp_path / "greet")
    worker = WorkerProcess(extra_env=FAST)
    worker.start()
    try:
        project = project_create(name="e2e", repo_path=str(repo))
        with override_settings(CELERY_TASK_DEFAULT_QUEUE=worker.queue):
            import yaml

            from agents_app.runtime.replay import replay_load

            header = replay_load(HANDWRITTEN_DEMO_TRACE).header
            session = session_create(
                project=project, axes={"work_mode": "plan", "model_mode": "deep"}
            )
            AgentSession.objects.filter(pk=session.pk).update(
                replay_trace=str(HANDWRITTEN_DEMO_TRACE)
            )
            plan = plan_create(
                session=session,
                spec=plan_spec_parse(yaml.safe_load(header["plan_yaml"])),
                source="file",
            )
            plan_accept(
                plan=plan, actor=Actor.system("test"), autonomous=True, permission_profile="trusted"
            )
        task = plan.tasks.get()

        def finished() -> bool:
            task.refresh_from_db()
            return task.status in FINAL

        wait_for(finished, timeout=120, what="the unit on the worker:\n" + worker.log())
        assert task.status == "done", task.status_reason
        unit = Unit.objects.get(task=task)
        assert unit.status == "succeeded"
        assert merges(repo) == [
            "sf: merge shout-flag: Add a --shout flag that upper-cases the greeting"
        ]
        shout = subprocess.run(
            ["python3", "greet.py", "--shout", "Ada"], cwd=repo, capture_output=True, text=True
        )
        assert shout.stdout == "HELLO, ADA!\n"
    finally:
        worker.stop()


def test_kill_9_a_worker_mid_unit_ten_times(tmp_path: Path) -> None:
    repo = demo_repo_create(tmp_path / "repo")
    project = project_create(name="kill", repo_path=str(repo))
    keys = [f"task{n}" for n in range(4)]
    for key in keys:
        one_task_session(project, key, slow_trace(tmp_path, key, seconds=3), start=False)
    queue = f"q-kill-{free_port()}"
    workers: list[Any] = [WorkerProcess(extra_env=FAST, queue=queue).start() for _ in range(2)]
    killed = 0
    try:
        while killed < 10:
            running = wait_for(
                lambda: (
                    Unit.objects.filter(status="running", task__runtime__isnull=False)
                    .select_related("task__runtime")
                    .first()
                ),
                timeout=120,
                what=f"a running unit to kill (kill #{killed + 1})",
            )
            owner = running.task.runtime.worker  # type: ignore[union-attr]
            victim = next((w for w in workers if w.hostname == owner), None)
            if victim is None or victim.process is None or victim.process.poll() is not None:
                time.sleep(0.2)
                continue
            time.sleep(0.5)  # well inside the unit's `sleep 3`
            victim.process.send_signal(signal.SIGKILL)
            victim.process.wait(timeout=10)
            killed += 1
            workers.remove(victim)
            workers.append(WorkerProcess(extra_env=FAST, queue=queue).start())
        wait_for(
            lambda: (
                all(status in FINAL for status in statuses(project).values())
                and len(statuses(project)) == 4
            ),
            timeout=240,
            what="every task to finish after the kills",
        )
    finally:
        for worker in workers:
            worker.stop()
    final = statuses(project)
    assert final == dict.fromkeys(keys, "done"), final
    assert sorted(merges(repo)) == sorted(f"sf: merge {key}: write {key}.txt" for key in keys), (
        "each merged once"
    )
    assert Unit.objects.filter(status="crashed").count() >= 10
    for key in keys:
        assert (repo / f"{key}.txt").read_text() == f"{key}\n"


def test_a_redis_restart_mid_run_loses_nothing(tmp_path: Path) -> None:
    redis_server = shutil.which("redis-server")
    assert redis_server, "redis-server is installed by scripts/setup.sh"
    port = free_port()
    command = [
        redis_server,
        "--port",
        str(port),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--appendonly",
        "no",
    ]
    redis = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    repo = demo_repo_create(tmp_path / "repo")
    project = project_create(name="redis", repo_path=str(repo))
    keys = [f"job{n}" for n in range(4)]
    for key in keys:
        one_task_session(project, key, slow_trace(tmp_path, key, seconds=2), start=False)
    env = {**FAST, "REDIS_URL": f"redis://127.0.0.1:{port}/0"}
    queue = f"q-redis-{port}"
    workers: list[Any] = [WorkerProcess(extra_env=env, queue=queue).start() for _ in range(2)]
    try:
        wait_for(
            lambda: Unit.objects.filter(status="running").exists(),
            timeout=120,
            what="a running unit",
        )
        waiting = Task.objects.filter(plan__session__project=project, units__isnull=True).count()
        assert waiting >= 1, "some tasks must still be queued in Redis when it dies"
        redis.send_signal(signal.SIGKILL)  # the broker and every queued message are gone
        redis.wait(timeout=10)
        time.sleep(3)
        redis = subprocess.Popen(command, stdout=subprocess.DEVNULL)
        wait_for(
            lambda: all(status in FINAL for status in statuses(project).values()),
            timeout=240,
            what="every task to finish after the Redis restart:\n" + workers[0].log()[-3000:],
        )
    finally:
        for worker in workers:
            worker.stop()
        redis.terminate()
        redis.wait(timeout=10)
    assert statuses(project) == dict.fromkeys(keys, "done")
    assert sorted(merges(repo)) == sorted(f"sf: merge {key}: write {key}.txt" for key in keys)
