"""Hostile plan and answers files, and bad headless flags: one line, exit 2, nothing written.

Each of these crashed with a traceback (exit 1) or hung before: a FIFO blocked the
reader, deep nesting raised RecursionError, a NUL character reached PostgreSQL, a
binary answers file raised UnicodeDecodeError, ``--timeout nan`` and ``--model ""``
were taken.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from io import StringIO
from pathlib import Path
from types import FrameType
from typing import Any

import pytest
import yaml
from django.conf import settings
from django.core.management import call_command

from agents_app.models import AgentSession, Project
from tasks_app.models import Plan, Task
from tasks_app.plan_files import MAX_PLAN_BYTES

pytestmark = pytest.mark.django_db
GOOD_TASK = {
    "key": "one",
    "title": "do one thing",
    "acceptance_criteria": ["it is done"],
    "verify": ["true"],
}
GOOD_PLAN = {"summary": "a plan", "tasks": [GOOD_TASK]}


def run_sf(*args: str) -> tuple[int, str, str]:
    out, err = StringIO(), StringIO()
    try:
        call_command("sf", *args, stdout=out, stderr=err)
    except SystemExit as exit_:
        return int(exit_.code or 0), out.getvalue(), err.getvalue()
    return 0, out.getvalue(), err.getvalue()


def counts() -> tuple[int, ...]:
    return tuple(m.objects.count() for m in (Project, AgentSession, Plan, Task))


@pytest.fixture(autouse=True)
def _never_hang() -> Iterator[None]:
    """A reader that blocks (a FIFO opened for reading) fails the test, not the run."""

    def stop(_signum: int, _frame: FrameType | None) -> None:
        raise TimeoutError("the reader blocked")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.alarm(20)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


def with_task(**fields: Any) -> dict[str, Any]:
    return {"summary": "a plan", "tasks": [{**GOOD_TASK, **fields}]}


def nested(depth: int) -> Any:
    value: Any = "deep"
    for _ in range(depth):
        value = [value]
    return value


HOSTILE_PLANS: list[tuple[str, Any, str]] = [
    ("p.yaml", b"\xff\xfe\x00s\x00u\x00m", "not UTF-8 text"),
    ("p.yaml", b"summary: a\x00b\n", "has a NUL byte at offset 10"),
    ("p.json", "[" * 100_000 + "]" * 100_000, "nested deeper than 32 levels"),
    ("p.yaml", "[" * 5_000 + "]" * 5_000, "nested deeper than 32 levels"),
    ("p.json", json.dumps(with_task(description=nested(40))), "nested deeper than 32 levels"),
    ("p.yaml", "summary: &a [*a]\ntasks: []\n", "nested deeper than 32 levels"),
    ("p.json", json.dumps(with_task(title="a\x00b")), "tasks[0].title: a NUL character"),
    ("p.yaml", 'summary: "a\\0b"\ntasks: []\n', "summary: a NUL character"),
    ("p.md", '---\nsummary: "x\\x00"\n---\nbody\n', "summary: a NUL character"),
    ("p.json", '{"summary": "\\ud800", "tasks": []}', "summary: a lone surrogate"),
    ("p.json", '{"\\u0000": 1}', "a NUL character"),
    ("p.json", '{"summary": 1' + "0" * 5_000 + "}", "invalid JSON: Exceeds the limit"),
    ("p.yaml", "summary: 1" + "0" * 5_000 + "\n", "invalid YAML: Exceeds the limit"),
    ("p.yaml", "summary: !!binary aGVsbG8=\ntasks: []\n", "summary: a bytes value"),
    ("p.json", json.dumps(with_task(cost_budget=1e20)), "cost_budget: Input should be less"),
    ("p.json", json.dumps(with_task(cost_budget="NaN")), "cost_budget: Input should be a finite"),
    ("p.yaml", "x" * (MAX_PLAN_BYTES + 1), "larger than 2048 KiB"),
]


@pytest.mark.parametrize(("name", "content", "message"), HOSTILE_PLANS)
def test_a_hostile_plan_file_is_one_line_and_exit_2(
    agent_session: Any, tmp_path: Path, name: str, content: str | bytes, message: str
) -> None:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8", errors="surrogatepass")
    before = counts()
    code, out, err = run_sf("plan", "import", str(path), "--session", str(agent_session.pk))
    assert code == 2, err
    assert out == ""
    # The file's problems name the file; the schema's name the field (tasks[0] (one)…).
    assert err.startswith((f"error: {path}: ", "error: tasks[0] (one).")), err
    assert message in err, err
    assert len(err.splitlines()) == 1, err
    assert counts() == before


@pytest.mark.parametrize("kind", ["fifo", "directory"])
def test_a_plan_import_of_what_is_not_a_regular_file_is_refused_before_opening(
    agent_session: Any, tmp_path: Path, kind: str
) -> None:
    path = tmp_path / "plan.yaml"
    os.mkfifo(path) if kind == "fifo" else path.mkdir()
    code, _, err = run_sf("plan", "import", str(path), "--session", str(agent_session.pk))
    assert code == 2
    expected = "a named pipe" if kind == "fifo" else "a directory"
    assert err == f"error: {path}: not a regular file ({expected})\n"


def test_a_good_plan_still_imports(agent_session: Any, tmp_path: Path) -> None:
    path = tmp_path / "plan.yaml"
    path.write_text(yaml.safe_dump(with_task(cost_budget=12.5, description="ünïcode ✓")))
    code, _, err = run_sf("plan", "import", str(path), "--session", str(agent_session.pk))
    assert code == 0, err
    assert Task.objects.get().description == "ünïcode ✓"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00", "not UTF-8 text"),
        (b"ask_user: {q: \x00}", "has a NUL byte"),
        ('ask_user: {q: "a\\0"}', "answers.yaml: NUL character"),
        ("[" * 5_000, "nested deeper than 32 levels"),
        ("ask_user: {q: 1" + "0" * 5_000 + "}", "Exceeds the limit"),
        ("fifo", "not a regular file (a named pipe)"),
    ],
)
def test_a_hostile_answers_file_is_one_line_and_exit_2(
    git_repo: Path, tmp_path: Path, content: str | bytes, message: str
) -> None:
    plan = tmp_path / "plan.yaml"
    plan.write_text(yaml.safe_dump(GOOD_PLAN))
    answers = tmp_path / "answers.yaml"
    if content == "fifo":
        os.mkfifo(answers)
    elif isinstance(content, bytes):
        answers.write_bytes(content)
    else:
        answers.write_text(content)
    before = counts()
    code, out, err = run_sf(
        "headless", "--project", str(git_repo), "--plan-file", str(plan), "--answers", str(answers)
    )
    assert code == 2, err
    assert err.startswith(f"error: --answers {answers}: "), err
    assert message in err
    assert len(err.splitlines()) == 1
    assert out == ""
    assert counts() == before


@pytest.mark.slow
@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        ("--timeout", "inf", "argument --timeout: expected a finite number of seconds, got 'inf'"),
        ("--timeout", "nan", "argument --timeout: expected a finite number of seconds, got 'nan'"),
        ("--timeout", "1e309", "expected a finite number of seconds, got '1e309'"),
        ("--model", "", "argument --model: must not be empty"),
        ("--model", " ", "argument --model: must not be empty"),
        ("--model", "a\nb", "argument --model: must be one line of printable text"),
        ("--model", "m" * 201, "argument --model: must be at most 200 characters, got 201"),
    ],
)
def test_bad_headless_flags_exit_2_with_one_error_line(
    git_repo: Path, tmp_path: Path, flag: str, value: str, message: str
) -> None:
    plan = tmp_path / "plan.yaml"
    plan.write_text(yaml.safe_dump(GOOD_PLAN))
    args = ["--project", str(git_repo), "--plan-file", str(plan), flag, value]
    result = subprocess.run(
        [sys.executable, "manage.py", "sf", "headless", *args],
        cwd=settings.BASE_DIR,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 2, result.stderr
    errors = [line for line in result.stderr.splitlines() if "error" in line]
    assert len(errors) == 1, result.stderr
    assert message in errors[0]
    assert result.stdout == ""
