"""Running ``manage.py sf headless`` in a real subprocess, for the headless tests:
the process, its events, and the recorded traces that stand in for the model."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from agents_app.runtime.recording import trace_from_steps, trace_write
from tasks_app.features.headless.events import event_parse
from tests.processes import ROOT, backends_of, child_database_url, wait_for

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


def git_show(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, check=True
    ).stdout
