"""The project's hooks in a real unit (docs/hooks.md): a scripted model, the real engine,
real bubblewrap. A pre_tool hook blocks a write, a post_tool note reaches the model's
next prompt, a unit_stop hook refuses a finish, the pre_verify hook runs before the
verify commands, the unit page shows each run; and the recorded unit replays."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from agents_app.models import TraceEvent
from agents_app.runtime.llm import complete
from agents_app.runtime.recording import trace_export, trace_write
from agents_app.runtime.replay import replay_load
from agents_app.runtime.sandbox import bwrap_problem
from agents_app.tests.runtime_helpers import ScriptedModel
from conftest import grant
from tasks_app.engine.drain import drain
from tasks_app.engine.replaying import replay_start
from tasks_app.engine.unit import UnitOptions
from tasks_app.models import Unit
from tasks_app.tests.test_engine import repo, run_next, start, task_spec

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(
        bool(bwrap_problem("/usr/bin/bwrap")), reason="bubblewrap is required (scripts/setup.sh)"
    ),
]
__all__ = ["repo"]  # fixture

GUARD = """\
import json, os, sys
call = json.loads(os.environ["SF_HOOK_INPUT"])
if call["path"] == "locked.txt":
    print("locked.txt is protected: write hello.txt instead")
    sys.exit(2)
"""
HOOKS = [
    {"name": "brief", "trigger": "session_start", "command": "echo SESSION-MARKER"},
    {
        "name": "guard",
        "trigger": "pre_tool",
        "match_tools": ["write_file"],
        "command": "python3 hooks/guard.py",
        "output": "block",
    },
    {
        "name": "after-write",
        "trigger": "post_tool",
        "match_tools": ["write_file", "edit_file"],
        "command": "echo AFTER-MARKER wrote $SF_HOOK_PATH",
    },
    {
        "name": "summary-says-hello",
        "trigger": "unit_stop",
        "command": "python3 hooks/summary.py",
        "output": "block",
        "max_runs": 2,
    },
    {
        "name": "pre-verify",
        "trigger": "pre_verify",
        "command": "echo PRE-VERIFY-MARKER; cat hello.txt",
    },
]
SUMMARY = """\
import os, sys
if "hello" not in os.environ["SF_HOOK_SUMMARY"]:
    print("say in the summary which file says hello")
    sys.exit(2)
"""
STEPS = [
    ("writing", [("write_file", {"path": "locked.txt", "content": "hello"})]),
    ("again", [("write_file", {"path": "hello.txt", "content": "hello"})]),
    ("done", [("finish", {"summary": "done"})]),
    ("done", [("finish", {"summary": "hello.txt says hello"})]),
]


def with_hook_scripts(repo: Path) -> None:
    (repo / "hooks").mkdir()
    (repo / "hooks" / "guard.py").write_text(GUARD)
    (repo / "hooks" / "summary.py").write_text(SUMMARY)
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-qm", "hooks"],
        cwd=repo,
        check=True,
    )


def hook_runs(unit: Unit) -> list[tuple[str, str]]:
    events = TraceEvent.objects.filter(unit_id=unit.pk, kind="hook").order_by("seq")
    return [(e.name, e.payload["effect"]) for e in events]


def tool_answers(unit: Unit) -> list[str]:
    events = TraceEvent.objects.filter(unit_id=unit.pk, kind="tool_call").order_by("seq")
    return [e.payload["output"] for e in events]


EXPECTED_RUNS = [
    ("brief", "noted"),
    ("guard", "blocked"),
    ("guard", "ran"),
    ("after-write", "noted"),
    ("summary-says-hello", "blocked"),
    ("summary-says-hello", "ran"),
    ("pre-verify", "noted"),
]


def test_hooks_block_note_and_run_before_verification_in_a_real_unit(
    repo: Path, client: Client, user: User
) -> None:
    with_hook_scripts(repo)
    session, _ = start(repo, task_spec(), policy={"hooks": HOOKS})
    model = ScriptedModel(*STEPS)
    report = run_next(session, model)

    unit = Unit.objects.get(task__plan__session=session)
    assert report.task_status == "done", unit.summary
    prompts = [str(call["messages"]) for call in model.calls]
    assert "SESSION-MARKER" in prompts[0]  # session_start: in the first step
    assert "not run: the project's hook guard blocked it: locked.txt is protected" in prompts[1]
    assert "AFTER-MARKER" not in prompts[1]  # a blocked call is not followed by post_tool
    assert "AFTER-MARKER wrote hello.txt" in prompts[2]  # post_tool: the next prompt
    assert "say in the summary which file says hello" in prompts[3]  # the finish refused
    assert hook_runs(unit) == EXPECTED_RUNS
    assert tool_answers(unit)[0].startswith("not run: the project's hook guard blocked it")
    assert "PRE-VERIFY-MARKER\nhello" in unit.verification_output
    assert unit.verification_passed
    merged = subprocess.run(
        ["git", "ls-tree", "-r", "--name-only", "HEAD"],
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    assert "hello.txt" in merged
    assert "locked.txt" not in merged

    grant(user, session.project, "viewer")
    client.force_login(user)
    page = client.get(reverse("unit-detail", args=[unit.pk])).content.decode()
    assert page.count('data-kind="hook"') == len(EXPECTED_RUNS)
    assert page.count('data-effect="blocked"') == 2
    assert "python3 hooks/guard.py" in page


def test_a_recorded_unit_with_hooks_replays_with_its_hooks_run_again(
    repo: Path, tmp_path: Path
) -> None:
    with_hook_scripts(repo)
    session, _ = start(repo, task_spec(), policy={"hooks": HOOKS})
    assert run_next(session, ScriptedModel(*STEPS)).task_status == "done"
    recorded = Unit.objects.get(task__plan__session=session)
    plan_yaml = yaml.safe_dump({"summary": "s", "tasks": [task_spec()]})
    header = {"plan_yaml": plan_yaml, "permission_profile": "trusted"}
    trace = trace_write(tmp_path / "t.jsonl", trace_export(unit_id=recorded.pk, header=header))
    subprocess.run(["git", "rm", "-q", "hello.txt"], cwd=repo, check=True)
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-qm", "rm"],
        cwd=repo,
        check=True,
    )

    seen: list[str] = []

    def completion(**kwargs: Any) -> Any:
        seen.append(str(kwargs["messages"]))
        return complete(max_retries=0, **kwargs)

    replay = replay_load(trace)
    replayed_session, plan = replay_start(replay, project=session.project)
    drain(
        session_id=replayed_session.pk,
        worker="replay",
        options=UnitOptions(replay=replay, completion=completion),
    )
    replayed = Unit.objects.get(task__plan=plan)
    assert plan.tasks.get().status == "done", replayed.summary
    assert hook_runs(replayed) == EXPECTED_RUNS  # run for real again, not read back
    assert "AFTER-MARKER wrote hello.txt" in seen[2]
