"""``manage.py sf headless`` when a run is interrupted: SIGINT and SIGTERM keep the
state and a resume finishes, a reload (12) and a crash restart through the
supervisor, and units on a real Celery worker (``--via-workers``).

The same real subprocesses as ``test_headless.py``.
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest

from agents_app.models import AgentSession
from tasks_app.engine.replaying import demo_repo_create
from tasks_app.models import Task, TaskRuntime, Unit
from tests.fixtures import HANDWRITTEN_DEMO_TRACE
from tests.headless_runs import (
    FINISH,
    WORK,
    Background,
    headless,
    make_trace,
    new_run,
    plan_yaml,
    slow_trace,
)
from tests.processes import WorkerProcess, wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return demo_repo_create(tmp_path / "repo")


# --- 11: cancelled, then resumed ----------------------------------------------------------


def test_sigint_mid_unit_keeps_state_and_a_resume_finishes(repo: Path, tmp_path: Path) -> None:
    trace = slow_trace(tmp_path, "slow", seconds=2)
    run = Background(
        *new_run(repo, trace),
        "--output-format",
        "stream-json",
        SF_HEADLESS_HEARTBEAT="300ms",
    )
    run.wait_for_event(lambda e: e.type == "unit" and e.status == "running")
    run.process.send_signal(signal.SIGINT)
    done = run.finish()
    assert done.code == 11, done.stderr
    result = done.result()
    assert (result.status, result.tasks[0].status) == ("cancelled", "paused")
    assert f"--session {result.session}" in result.reason
    assert "heartbeat" in done.types()
    assert Unit.objects.get().status == "cancelled"  # stopped at a dispatch point
    assert not (repo / "out.txt").exists()

    resumed = headless("--session", str(result.session), "--output-format", "json")
    assert resumed.code == 0, resumed.stderr
    assert (repo / "out.txt").read_text() == "ok\n"
    assert AgentSession.objects.get().paused is False


# --- 12: reload, and the restart loop --------------------------------------------------


def test_reload_exits_12_and_the_supervisor_restarts_through_it(repo: Path, tmp_path: Path) -> None:
    trace = make_trace(tmp_path, [WORK, FINISH], plan_yaml("one", "two"))
    run = headless(
        *new_run(repo, trace),
        "--output-format",
        "json",
        SF_HEADLESS_UNITS_PER_PROCESS="1",
    )
    assert run.code == 12, run.stderr
    assert run.result().status == "reload"
    assert sorted(t.status for t in run.result().tasks) == ["done", "todo"]
    resumed = headless("--session", str(run.result().session), "--output-format", "json")
    assert resumed.code == 0
    assert Unit.objects.count() == 2

    other = demo_repo_create(tmp_path / "other")
    supervised = headless(
        *new_run(other, trace),
        "--max-restarts",
        "1",
        "--output-format",
        "stream-json",
        SF_HEADLESS_UNITS_PER_PROCESS="1",
    )
    assert supervised.code == 0, supervised.stderr
    restarts = [e for e in supervised.events() if e.type == "restart"]
    assert [(e.reason, e.after_s) for e in restarts] == [("the engine asked for a reload", 0.0)]
    assert [e.type for e in supervised.events()].count("result") == 1
    assert [t.status for t in supervised.result().tasks] == ["done", "done"]


def test_a_crashed_run_is_restarted_with_backoff_and_resumes(repo: Path, tmp_path: Path) -> None:
    trace = slow_trace(tmp_path, "crashy", seconds=3)
    run = Background(
        *new_run(repo, trace),
        "--max-restarts",
        "2",
        "--output-format",
        "stream-json",
    )
    runtime = wait_for(
        lambda: TaskRuntime.objects.filter(pid__isnull=False).first(), timeout=60, what="a unit"
    )
    os.kill(runtime.pid, signal.SIGKILL)  # the child, mid-unit
    done = run.finish(timeout=120)
    assert done.code == 0, done.stderr
    restarts = [e for e in done.events() if e.type == "restart"]
    assert [(e.restart, e.after_s) for e in restarts] == [(1, 5.0)]
    assert "SIGKILL" in restarts[0].reason
    assert [u.status for u in Unit.objects.order_by("pk")] == ["crashed", "succeeded"]
    assert (repo / "out.txt").read_text() == "ok\n"
    sessions = {e.session for e in done.events() if e.type == "session"}
    assert len(sessions) == 1  # the restart resumed the same session


# --- via the workers ---------------------------------------------------------------------


def test_via_workers_the_units_run_on_a_celery_worker(repo: Path) -> None:
    worker = WorkerProcess(extra_env={"SF_WORKER_HEARTBEAT": "1s"}).start()
    try:
        run = headless(
            *new_run(repo, HANDWRITTEN_DEMO_TRACE),
            "--via-workers",
            "--output-format",
            "stream-json",
            "--timeout",
            "120",
            SF_CELERY_QUEUE=worker.queue,
            SF_HEADLESS_HEARTBEAT="500ms",
        )
        assert run.code == 0, run.stderr + worker.log()
        assert run.result().tasks[0].status == "done"
        task = Task.objects.get()
        assert task.schedule.claimed_by == worker.hostname  # not this process
        assert "heartbeat" in run.types()
        assert AgentSession.objects.get().driver == "workers"
    finally:
        worker.stop()


def test_after_max_restarts_crashes_the_supervisor_exits_1(repo: Path, tmp_path: Path) -> None:
    trace = slow_trace(tmp_path, "doomed", seconds=20)
    run = Background(
        *new_run(repo, trace),
        "--max-restarts",
        "1",
        "--output-format",
        "json",
    )
    killed: list[int] = []
    for _ in range(2):  # the first run, then its one restart
        runtime = wait_for(
            lambda: TaskRuntime.objects.exclude(pid__in=killed).filter(pid__isnull=False).first(),
            timeout=60,
            what="a unit",
        )
        os.kill(runtime.pid, signal.SIGKILL)
        killed.append(runtime.pid)
    done = run.finish(timeout=60)
    assert done.code == 1, done.stderr
    result = json.loads(done.stdout)  # json: the supervisor's one result object
    assert (result["status"], result["exit_code"]) == ("error", 1)
    assert "1 restarts spent" in result["reason"]
    assert result["resume"] == f"python manage.py sf headless --session {result['session']}"


def test_sigterm_via_workers_stops_the_workers_unit_and_a_resume_finishes(
    repo: Path, tmp_path: Path
) -> None:
    trace = slow_trace(tmp_path, "slow", seconds=2)
    worker = WorkerProcess(extra_env={"SF_WORKER_HEARTBEAT": "1s"}).start()
    try:
        run = Background(
            *new_run(repo, trace),
            "--via-workers",
            "--output-format",
            "stream-json",
            SF_CELERY_QUEUE=worker.queue,
        )
        run.wait_for_event(lambda e: e.type == "unit" and e.status == "running")
        run.process.send_signal(signal.SIGTERM)
        done = run.finish()
        assert done.code == 11, done.stderr + worker.log()
        assert done.result().reason.startswith("cancelled by SIGTERM")
        unit = Unit.objects.get()
        assert unit.status == "cancelled"  # the worker stopped it at a dispatch point
        assert Task.objects.get().status == "paused"
        resumed = headless(
            "--session",
            str(done.result().session),
            "--via-workers",
            "--output-format",
            "json",
            SF_CELERY_QUEUE=worker.queue,
        )
        assert resumed.code == 0, resumed.stdout + resumed.stderr
        assert (repo / "out.txt").read_text() == "ok\n"
    finally:
        worker.stop()
