"""``manage.py sf headless`` in real subprocesses: every exit code from a real scenario.

The model is the one thing simulated (recorded traces); the units run for real in git
worktrees of a real repository, verify commands run and merges are real. stdout is
parsed line by line against the event schemas. Cancelling, reloading, restarting and
running via the workers: ``test_headless_recovery.py``.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from agents_app.models import AgentSession, Project, ReviewStatus, RiskDecision
from tasks_app.engine.replaying import demo_repo_create
from tasks_app.models import Plan, Task, Unit
from tests.cli import run_sf
from tests.fixtures import HANDWRITTEN_DEMO_TRACE
from tests.headless_runs import (
    FINISH,
    WORK,
    headless,
    make_trace,
    new_run,
    plan_yaml,
)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return demo_repo_create(tmp_path / "repo")


# --- 0: success ---------------------------------------------------------------------


def test_the_demo_replays_to_a_merged_commit_with_a_stream_of_valid_events(repo: Path) -> None:
    run = headless(
        *new_run(repo, HANDWRITTEN_DEMO_TRACE),
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

    # Accepted in this process (tasks_app/tests/test_cli.py tests the command): what is
    # tested here is that a second headless process takes the accepted plan on.
    code, _out, err = run_sf("plan", "accept", str(plan.pk), "--permission-profile", "trusted")
    assert code == 0, err
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
    run = headless("--project", str(repo), "--replay", str(HANDWRITTEN_DEMO_TRACE), "--autonomous")
    assert run.code == 0, run.stderr
    session = AgentSession.objects.get()
    # The run above is the real process; the queries read what it left, in this process
    # (three interpreters and Django fewer: a query's own process adds nothing to test).
    by_id = run_sf("headless", "query", "--session", str(session.pk))
    by_path = run_sf("headless", "query", "--project", str(repo))
    assert by_id[0] == by_path[0] == 0, (by_id, by_path)
    snapshot = json.loads(by_id[1])
    assert snapshot == json.loads(by_path[1])
    assert snapshot["session"]["axes"]["run_control"] == "autonomous"
    assert [(t["key"], t["status"]) for t in snapshot["tasks"]] == [("shout-flag", "done")]
    assert run_sf("headless", "query", "--session", "999999")[0] == 2


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
    # The unit the timeout cut (if one had started: under load the 1.5 s may end the
    # run before its first unit does) crashed; the resumed run's unit succeeded.
    units = [u.status for u in Unit.objects.order_by("pk")]
    assert units[-1] == "succeeded", units
    assert set(units[:-1]) <= {"crashed"}, units


# --- 2: bad input -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--intent", "x", "--plan-file", "examples/plan.yaml"], "not both"),
        (["--plan-file", "examples/plan.yaml"], "--project PATH"),
        (["--project", "/nonexistent/repo", "--intent", "x"], "no such directory"),
        (["--project", "{tmp}", "--replay", str(HANDWRITTEN_DEMO_TRACE)], "not a git repository"),
        (["--project", "{repo}", "--replay", "{tmp}/missing.jsonl"], "cannot read"),
        (["--project", "{repo}", "--plan-file", "{tmp}/bad.yaml"], "bad.yaml"),
        (
            [
                "--project",
                "{repo}",
                "--replay",
                str(HANDWRITTEN_DEMO_TRACE),
                "--answers",
                "{tmp}/bad.yaml",
            ],
            "--answers",
        ),
        (["--project", "{repo}", "--intent", "add a flag"], "no model configured"),
        (["--project", "{repo}"], "nothing to run"),
        (["--session", "424242"], "no such session"),
        (["next", "--via-workers", "--session", "1"], "exactly one unit"),
    ],
)
@pytest.mark.django_db  # in this process: a rolled-back transaction, no flush after it
def test_bad_input_exits_2_with_one_line_and_writes_nothing(
    repo: Path, tmp_path: Path, args: list[str], message: str, settings: Any
) -> None:
    """In this process (``sf headless`` parses and checks its input the same way in
    either; the process boundary's exit codes and streams are the tests above and below).
    What the command wrote would be seen here, inside the test's transaction."""
    (tmp_path / "bad.yaml").write_text("tasks: [{key: 1}]\nsurprise: true\n")
    plain = tmp_path / "plain"
    plain.mkdir()
    filled = [a.format(repo=repo, tmp=plain if a == "{tmp}" else tmp_path) for a in args]
    settings.SF_MODEL_DEEP = settings.SF_MODEL_SMART = ""
    code, out, err = run_sf("headless", *filled)
    assert code == 2, err
    errors = [line for line in err.splitlines() if "error" in line]
    assert len(errors) == 1, err
    assert message in errors[0]
    assert out == ""
    assert not Project.objects.exists()
    assert not AgentSession.objects.exists()


def test_a_value_argparse_refuses_exits_2_with_one_line_and_writes_nothing() -> None:
    """A real process: argparse's own exit (2, its one line on stderr); in a test
    process Django turns it into an exception instead."""
    run = headless("--timeout", "-3")
    assert run.code == 2, run.stderr
    errors = [line for line in run.stderr.splitlines() if "error" in line]
    assert len(errors) == 1, run.stderr
    assert "must be more than 0" in errors[0]
    assert run.stdout == ""
    assert not Project.objects.exists()
    assert not AgentSession.objects.exists()


def test_bad_input_in_json_is_a_usage_result(repo: Path) -> None:
    """A real process: the usage result is the one line on its stdout."""
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
