"""``manage.py sf headless`` in real subprocesses: every exit code from a real scenario.

The model is the one thing simulated (recorded traces); the units run for real in git
worktrees of a real repository, verify commands run and merges are real. stdout is
parsed line by line against the event schemas.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from agents_app.models import AgentSession, Project, ReviewStatus, RiskDecision
from agents_app.runtime.recording import trace_from_steps, trace_write
from tasks_app.engine.replaying import DEMO_TRACE, demo_repo_create
from tasks_app.headless.events import event_parse
from tasks_app.models import Plan, Task, TaskRuntime, Unit
from tests.processes import ROOT, WorkerProcess, backends_of, child_database_url, wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]
NAME = "test-headless"


def environment(**extra: str) -> dict[str, str]:
    return {
        **os.environ,
        "DATABASE_URL": child_database_url(NAME),
        "PYTHONUNBUFFERED": "1",
        "SF_HEADLESS_GRACE": "20s",
        **extra,
    }


def command(*args: str) -> list[str]:
    return [sys.executable, "manage.py", "sf", "headless", *args]


class Run:
    def __init__(self, code: int, stdout: str, stderr: str) -> None:
        self.code, self.stdout, self.stderr = code, stdout, stderr

    def events(self) -> list[Any]:
        return [event_parse(line) for line in self.stdout.splitlines()]

    def result(self) -> Any:
        return self.events()[-1]

    def types(self) -> set[str]:
        return {event.type for event in self.events()}


def headless(*args: str, timeout: float = 120, **extra: str) -> Run:
    done = subprocess.run(
        command(*args),
        cwd=ROOT,
        env=environment(**extra),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    wait_for(lambda: backends_of(NAME) == 0, timeout=10, what="headless's sessions to close")
    return Run(done.returncode, done.stdout, done.stderr)


class Background:
    """A headless run we can signal while it works; stdout read line by line."""

    def __init__(self, *args: str, **extra: str) -> None:
        self.process = subprocess.Popen(
            command(*args),
            cwd=ROOT,
            env=environment(**extra),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: list[str] = []

    def wait_for_event(self, predicate: Any, timeout: float = 60) -> Any:
        assert self.process.stdout is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            line = self.process.stdout.readline()
            if not line:
                raise AssertionError(f"headless ended early:\n{self.finish().stderr}")
            self.lines.append(line)
            event = event_parse(line)
            if predicate(event):
                return event
        raise AssertionError("the event never came")

    def finish(self, timeout: float = 90) -> Run:
        out, err = self.process.communicate(timeout=timeout)
        wait_for(lambda: backends_of(NAME) == 0, timeout=10, what="headless's sessions to close")
        return Run(self.process.returncode, "".join(self.lines) + out, err)


def plan_yaml(*keys: str, verify: str = "true", max_retries: int = 3) -> str:
    return yaml.safe_dump(
        {
            "summary": "test plan",
            "intent": "exercise headless",
            "tasks": [
                {
                    "key": key,
                    "title": f"task {key}",
                    "acceptance_criteria": [f"{key} is done"],
                    "verify": [verify],
                    "risk_level": "low",
                    "mutation_scope": "workspace",
                    "max_retries": max_retries,
                }
                for key in keys
            ],
        }
    )


def make_trace(
    tmp: Path, steps: list[Any], plan: str, *, profile: str = "trusted", name: str = "t"
) -> Path:
    header = {"note": "test fixture", "plan_yaml": plan, "permission_profile": profile}
    return trace_write(tmp / f"{name}.jsonl", trace_from_steps(steps, header=header, worktree=tmp))


FINISH = ("done", [("finish", {"summary": "wrote a file"})])
# Every unit must change something (the engine refuses to merge nothing): a file of its own.
WORK = ("working", [("run_command", {"command": "mktemp -p . done.XXXXXX"})])


def new_run(repo: Path, trace: Path) -> tuple[str, ...]:
    """The arguments of a new run on ``repo`` that replays ``trace`` and builds."""
    return ("--project", str(repo), "--replay", str(trace), "--autonomous")


def slow_trace(tmp: Path, key: str, *, seconds: int) -> Path:
    """A unit that works for a while (a tool call), then writes out.txt and finishes."""
    steps = [
        ("working", [("run_command", {"command": f"sleep {seconds}"})]),
        ("writing", [("write_file", {"path": "out.txt", "content": "ok\n"})]),
        FINISH,
    ]
    return make_trace(tmp, steps, plan_yaml(key, verify="test -f out.txt"))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return demo_repo_create(tmp_path / "repo")


def git_show(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, check=True
    ).stdout


# --- 0: success ---------------------------------------------------------------------


def test_the_demo_replays_to_a_merged_commit_with_a_stream_of_valid_events(repo: Path) -> None:
    run = headless(
        *new_run(repo, DEMO_TRACE),
        "--output-format",
        "stream-json",
    )
    assert run.code == 0, run.stderr
    events = run.events()  # every stdout line is an event of a documented schema
    assert {"session", "plan", "transition", "task", "unit", "tool_call", "result"} <= run.types()
    assert [e.tool for e in events if e.type == "tool_call"] == [
        "read_file",
        "edit_file",
        "write_file",
        "run_command",
        "finish",
    ]
    result = events[-1]
    assert (result.type, result.exit_code, result.status) == ("result", 0, "success")
    assert [t.status for t in result.tasks] == ["done"]
    shout = subprocess.run(
        ["python3", "greet.py", "--shout", "Ada"], cwd=repo, capture_output=True, text=True
    )
    assert shout.stdout == "HELLO, ADA!\n"  # merged into the project's main branch
    assert "[sf] task shout-flag: review -> done" in run.stderr  # progress on stderr


def test_json_prints_one_object_and_a_plan_waits_for_acceptance(repo: Path) -> None:
    trace = make_trace(repo.parent, [WORK, FINISH], plan_yaml("only"))
    run = headless("--project", str(repo), "--replay", str(trace), "--output-format", "json")
    assert run.code == 10, run.stderr
    assert len(run.stdout.splitlines()) == 1
    result = run.result()
    assert result.status == "blocked"
    assert "awaits acceptance" in result.waiting_for[0]
    plan = Plan.objects.get(pk=result.plan)
    assert plan.status == "proposed"
    assert not Unit.objects.exists()

    accept = subprocess.run(
        [
            sys.executable,
            "manage.py",
            "sf",
            "plan",
            "accept",
            str(plan.pk),
            "--permission-profile",
            "trusted",
        ],
        cwd=ROOT,
        env=environment(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert accept.returncode == 0, accept.stderr
    resumed = headless("--session", str(result.session), "--output-format", "json")
    assert resumed.code == 0, resumed.stderr
    assert resumed.result().tasks[0].status == "done"


def test_next_runs_exactly_one_unit(repo: Path) -> None:
    trace = make_trace(repo.parent, [WORK, FINISH], plan_yaml("first", "second"))
    first = headless(
        "next",
        *new_run(repo, trace),
        "--output-format",
        "json",
    )
    assert first.code == 0, first.stderr
    assert Unit.objects.count() == 1
    assert sorted(t.status for t in first.result().tasks) == ["done", "todo"]
    second = headless("next", "--session", str(first.result().session), "--output-format", "json")
    assert second.code == 0, second.stderr
    assert Unit.objects.count() == 2
    assert [t.status for t in second.result().tasks] == ["done", "done"]


def test_query_is_a_snapshot_without_a_model(repo: Path) -> None:
    run = headless("--project", str(repo), "--replay", str(DEMO_TRACE), "--autonomous")
    assert run.code == 0, run.stderr
    session = AgentSession.objects.get()
    by_id = headless("query", "--session", str(session.pk))
    by_path = headless("query", "--project", str(repo))
    assert by_id.code == by_path.code == 0
    snapshot = json.loads(by_id.stdout)
    assert snapshot == json.loads(by_path.stdout)
    assert snapshot["session"]["axes"]["run_control"] == "autonomous"
    assert [(t["key"], t["status"]) for t in snapshot["tasks"]] == [("shout-flag", "done")]
    assert headless("query", "--session", "999999").code == 2


# --- 1: error, timeout ------------------------------------------------------------------


def test_a_failed_task_exits_1(repo: Path) -> None:
    trace = make_trace(
        repo.parent, [WORK, FINISH], plan_yaml("broken", verify="false", max_retries=0)
    )
    run = headless(*new_run(repo, trace), "--output-format", "json")
    assert run.code == 1, run.stderr
    result = run.result()
    assert (result.status, result.tasks[0].status) == ("error", "failed")
    assert "broken" in result.reason


def test_timeout_exits_1_and_the_session_resumes(repo: Path) -> None:
    steps = [("waiting", [("run_command", {"command": "sleep 4"})]), WORK, FINISH]
    trace = make_trace(repo.parent, steps, plan_yaml("slow"))
    started = time.monotonic()
    run = headless(
        *new_run(repo, trace),
        "--timeout",
        "1.5",
        "--output-format",
        "json",
        SF_HEADLESS_GRACE="0s",
    )
    assert run.code == 1, run.stderr
    assert run.result().status == "timeout"
    assert time.monotonic() - started < 15
    session = AgentSession.objects.get()
    assert session.paused
    assert session.pause_reason.startswith("headless: timed out")
    resumed = headless("--session", str(session.pk), "--output-format", "json")
    assert resumed.code == 0, resumed.stderr
    assert [u.status for u in Unit.objects.order_by("pk")] == ["crashed", "succeeded"]


# --- 2: bad input -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--intent", "x", "--plan-file", "examples/plan.yaml"], "not both"),
        (["--plan-file", "examples/plan.yaml"], "--project PATH"),
        (["--project", "/nonexistent/repo", "--intent", "x"], "no such directory"),
        (["--project", "{tmp}", "--replay", str(DEMO_TRACE)], "not a git repository"),
        (["--project", "{repo}", "--replay", "{tmp}/missing.jsonl"], "cannot read"),
        (["--project", "{repo}", "--plan-file", "{tmp}/bad.yaml"], "bad.yaml"),
        (
            ["--project", "{repo}", "--replay", str(DEMO_TRACE), "--answers", "{tmp}/bad.yaml"],
            "--answers",
        ),
        (["--project", "{repo}", "--intent", "add a flag"], "no model configured"),
        (["--project", "{repo}"], "nothing to run"),
        (["--session", "424242"], "no such session"),
        (["--timeout", "-3"], "must be more than 0"),
        (["next", "--via-workers", "--session", "1"], "exactly one unit"),
    ],
)
def test_bad_input_exits_2_with_one_line_and_writes_nothing(
    repo: Path, tmp_path: Path, args: list[str], message: str
) -> None:
    (tmp_path / "bad.yaml").write_text("tasks: [{key: 1}]\nsurprise: true\n")
    plain = tmp_path / "plain"
    plain.mkdir()
    filled = [a.format(repo=repo, tmp=plain if a == "{tmp}" else tmp_path) for a in args]
    run = headless(*filled, SF_MODEL_DEEP="", SF_MODEL_SMART="")
    assert run.code == 2, run.stderr
    errors = [line for line in run.stderr.splitlines() if "error" in line]
    assert len(errors) == 1, run.stderr
    assert message in errors[0]
    assert run.stdout == ""
    assert not Project.objects.exists()
    assert not AgentSession.objects.exists()


def test_bad_input_in_json_is_a_usage_result(repo: Path) -> None:
    run = headless("--project", str(repo), "--output-format", "json")
    assert run.code == 2
    result = run.result()
    assert (result.status, result.exit_code, result.ok) == ("usage", 2, False)


# --- 10: blocked, and answers ----------------------------------------------------------


def test_an_approval_blocks_and_the_answers_file_settles_it(repo: Path, tmp_path: Path) -> None:
    install = "pip install --no-index --dry-run sf-nothing"
    steps = [
        ("installing", [("run_command", {"command": install})]),
        ("writing", [("write_file", {"path": "out.txt", "content": "ok\n"})]),
        FINISH,
    ]
    trace = make_trace(
        tmp_path, steps, plan_yaml("install", verify="test -f out.txt"), profile="normal"
    )
    run = headless(
        *new_run(repo, trace),
        "--output-format",
        "stream-json",
    )
    assert run.code == 10, run.stderr
    asks = [e for e in run.events() if e.type == "decision"]
    assert [(e.decision, e.review_status) for e in asks] == [("ask", "pending")]
    result = run.result()
    assert result.status == "blocked"
    assert any(f"decision {asks[0].id}" in item for item in result.waiting_for)

    answers = tmp_path / "answers.yaml"
    answers.write_text(
        yaml.safe_dump(
            {
                "approvals": [
                    {"tool": "run_command", "match": "pip install *", "decision": "approve"}
                ]
            }
        )
    )
    resumed = headless(
        "--session", str(result.session), "--answers", str(answers), "--output-format", "json"
    )
    # The approved call ran (once); under the normal profile a person reviews the merge.
    assert resumed.code == 10, resumed.stderr
    assert resumed.result().waiting_for == ["review install on the task board"]
    decision = RiskDecision.objects.get(pk=asks[0].id)
    assert decision.review_status == ReviewStatus.APPROVED
    assert decision.review_note == f"pre-supplied answer from {answers}"
    assert decision.used_at is not None
    assert Task.objects.get().status == "review"
    assert Unit.objects.order_by("pk").last().verification_passed is True


def test_ask_user_blocks_until_answered(repo: Path, tmp_path: Path) -> None:
    question = "Which greeting should --shout use?"
    steps = [("asking", [("ask_user", {"question": question})]), WORK, FINISH]
    trace = make_trace(tmp_path, steps, plan_yaml("ask"))
    run = headless(*new_run(repo, trace), "--output-format", "json")
    assert run.code == 10, run.stderr
    assert run.result().waiting_for == [f"answer ask's question (--answers): {question}"]
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"ask_user": {question: "HELLO"}}))
    resumed = headless(
        "--session", str(run.result().session), "--answers", str(answers), "--output-format", "json"
    )
    assert resumed.code == 0, resumed.stderr
    assert Task.objects.get().status == "done"


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
            *new_run(repo, DEMO_TRACE),
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
