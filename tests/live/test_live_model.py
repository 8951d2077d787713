"""The whole engine against a real model served on this machine (``-m live_model``).

An intent goes in through ``sf headless``; the model plans it (planning asks the deep
mode, here the local model), the unit runs in a git worktree through the gate, the
model's tool calls are written as text and recognised, the verify command runs, trusted
review merges. What must hold every time is that the run ends cleanly — exit 0 or 1, no
traceback, every task in a final state (or blocked on a dependency that failed) with
its reason, no worktree left behind, the session finished — and the simplest task must
succeed: a model that cannot write one file through SF's tools would mean the tool-call
path is broken, not that the model is small. The run is unattended as a team's CI run
would be: an answers file tells ask_user to decide alone and rejects every approval.

SF sends temperature 0 by default, so a second run at 0 would repeat the first; the
retry (only when the first run did not merge) samples at ``RETRY_TEMPERATURE``. What
the engine does with whatever the model does with a harder intent is checked on
recorded runs of this model, replayed in the fast layer (tests/test_live_replays.py,
recorded by tests/fixtures/record_live_traces.py), not asked of the model each run.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from agents_app.models import AgentSession
from tasks_app.models import HoldReason, Task
from tests.headless_runs import Run, headless
from tests.live.conftest import LocalModel
from tests.live.unattended import BOUNDS, answers_write, repo_make, units_record

pytestmark = [pytest.mark.live_model, pytest.mark.slow, pytest.mark.django_db(transaction=True)]
FINAL = {"done", "failed", "cancelled", "skipped"}
TIMEOUT = 900  # s: planning and a few units on two busy cores
# Writing hello.txt takes two or three steps (write, maybe a check, finish): a model that
# has not done it in six is lost, and its unit ends instead of going on. The steps bound
# the unit, not the clock: on a busy machine one step of this model took 3 minutes, and
# a unit cut by its hard timeout in the middle of a step is retried from nothing.
HELLO_BOUNDS = {"SF_UNIT_MAX_STEPS": "6", "SF_UNIT_HARD_TIMEOUT": "600s"}


@dataclass(frozen=True)
class Case:
    name: str
    files: dict[str, str]  # the repository's first commit (or SAMPLE_REPO's when empty)
    intent: str


HELLO = Case(
    "hello", {"README.md": "# notes\n"}, "Create a file hello.txt whose only line is: hello"
)
HELLO_RUNS = 2
RETRY_TEMPERATURE = 0.7


def run_intent(
    case: Case,
    repo: Path,
    model: LocalModel,
    bounds: dict[str, str] = BOUNDS,
    temperature: float = 0.0,
) -> Run:
    answers = answers_write(repo)
    run = headless(
        "--project",
        str(repo),
        "--intent",
        case.intent,
        "--autonomous",
        "--permission-profile",
        "trusted",
        "--output-format",
        "json",
        "--answers",
        str(answers),
        timeout=TIMEOUT,
        **model.environment(temperature),
        **bounds,
    )
    units_record(run, case.name)
    return run


def assert_ended_cleanly(run: Run, repo: Path) -> AgentSession:
    """Exit 0 or 1 with the session finished; or exit 10, the run stopped for a person
    (the answers file's rejection of a gate ask leaves the task blocked on it, with the
    reason, as the engine does for any rejection). Never a traceback, a hang, or a task
    left running or due without a reason."""
    assert run.code in (0, 1, 10), f"exit {run.code}\n{run.stderr[-3000:]}"
    assert "Traceback" not in run.stderr, run.stderr[-3000:]
    result = run.result()  # stdout is one documented result event
    assert result.type == "result"
    session = AgentSession.objects.get(pk=result.session)
    waiting = run.code == 10
    if waiting:
        assert result.waiting_for, result
    else:
        assert session.status in ("completed", "failed"), session.status
    tasks = list(Task.objects.filter(plan__session=session))
    for task in tasks:
        # Final, or waiting on a dependency that ended the wrong way (a person may retry
        # or skip that one), or (exit 10) on a person: nothing is left running or due.
        settled = (
            task.status in FINAL
            or (task.status == "blocked" and (waiting or task.hold_reason == HoldReason.DEPENDENCY))
            # Stopped for a person: a task behind the one waiting on them has not started.
            or (waiting and task.status == "todo")
            # Verified work a person must review (a normal profile approves nothing alone).
            or (waiting and task.status == "review")
        )
        assert settled, f"{task.key} is {task.status} ({task.hold_reason})"
        if task.status in ("failed", "blocked"):
            assert task.status_reason, f"{task.key} is {task.status} without a reason"
        if task.status == "review":
            assert f"review {task.key} on the task board" in result.waiting_for, result
    trees = subprocess.run(
        ["git", "worktree", "list"], cwd=repo, capture_output=True, text=True, check=True
    )
    # Only a failed task (or one waiting on a person) keeps its worktree, for a person to
    # look at (a retry starts a fresh one); a done, skipped or cancelled task leaves none.
    kept = [
        f"[sf/p{task.plan_id}/{task.key}/"
        for task in tasks
        if task.status == "failed" or (waiting and task.status in ("blocked", "review"))
    ]
    for line in trees.stdout.splitlines()[1:]:
        assert any(branch in line for branch in kept), line
    return session


def test_the_simplest_intent_is_planned_built_verified_and_merged(
    local_model: LocalModel, tmp_path: Path
) -> None:
    for attempt in range(1, HELLO_RUNS + 1):
        repo = repo_make(HELLO.files, tmp_path / f"{HELLO.name}-{attempt}")
        temperature = 0.0 if attempt == 1 else RETRY_TEMPERATURE
        run = run_intent(HELLO, repo, local_model, HELLO_BOUNDS, temperature)
        assert_ended_cleanly(run, repo)
        if run.code == 0:
            break
    assert run.code == 0, f"none of {HELLO_RUNS} runs merged; the last:\n{run.stderr[-3000:]}"
    assert (repo / "hello.txt").read_text().strip() == "hello"
    log = subprocess.run(
        ["git", "log", "--format=%s", "main"], cwd=repo, capture_output=True, text=True, check=True
    )
    assert log.stdout.startswith("sf: merge"), log.stdout
