"""Record a unit, export its trace, replay it elsewhere: the same tool calls, the same
result; a diverging call is a miss that never reaches a live model. Plus the command
line of ``sf replay``, ``sf gate`` and ``sf redact``."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from agents_app.models import TraceEvent, TraceKind
from agents_app.runtime import llm
from agents_app.runtime.recording import trace_export, trace_write
from agents_app.services import project_create, session_create
from agents_app.tests.runtime_helpers import ScriptedModel
from sf_core.actors import Actor
from sf_core.errors import SfError
from tasks_app.engine.replaying import demo_repo_create, replay_run
from tasks_app.engine.unit import UnitOptions, unit_run
from tasks_app.models import TaskSchedule, Unit
from tasks_app.recording import unit_record
from tasks_app.schemas import plan_spec_parse
from tasks_app.services import plan_accept, plan_create
from tests.cli import run_sf
from tests.processes import ROOT, child_database_url

pytestmark = pytest.mark.django_db
PLAN = {
    "summary": "Say goodbye too",
    "tasks": [
        {
            "key": "farewell",
            "title": "Add farewell() to greet.py",
            "acceptance_criteria": ["farewell('Ada') returns 'Goodbye, Ada!'"],
            # Not `python3 -c …`: the gate asks about inline code even when trusted,
            # and verify commands are gated like the agent's.
            "verify": ["grep -q 'return f\"Goodbye, {name}!\"' greet.py"],
            "risk_level": "low",
        }
    ],
}
STEPS = [
    ("Reading the greeter.", [("read_file", {"path": "greet.py"})]),
    ("Adding farewell.", [("write_file", {"path": "farewell.py", "content": "x = 1\n"})]),
    (
        "Appending to greet.py.",
        [
            (
                "run_command",
                {
                    "command": "printf '\\n\\ndef farewell(name):\\n    return f\"Goodbye, {name}!\"\\n' >> greet.py"
                },
            )
        ],
    ),
    ("Checking.", [("run_command", {"command": "python3 -m unittest -q"})]),
    ("Done.", [("finish", {"summary": "farewell() added"})]),
]


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.strip()


def record(repo: Path) -> tuple[Unit, list[dict[str, Any]]]:
    """A unit run against a scripted model (through litellm), exported as a trace."""
    project = project_create(name="recorded", repo_path=str(repo))
    session = session_create(project=project, axes={"work_mode": "plan", "model_mode": "deep"})
    plan = plan_create(session=session, spec=plan_spec_parse(PLAN), source="api")
    plan_accept(
        plan=plan,
        actor=Actor.system("t"),
        autonomous=True,
        permission_profile="trusted",
        start=False,
    )
    task_id = TaskSchedule.objects.get(task__plan=plan).task_id
    report = unit_run(
        task_id=task_id,
        worker="test",
        options=UnitOptions(model="openai/gpt-4o", completion=ScriptedModel(*STEPS)),
    )
    assert report is not None
    assert report.task_status == "done", report.detail
    unit = Unit.objects.get(pk=report.unit_id)
    header = {"plan_yaml": yaml.safe_dump(PLAN), "permission_profile": "trusted"}
    return unit, trace_export(unit_id=unit.pk, header=header)


def calls(unit: Unit) -> list[tuple[str, str, str]]:
    """Each tool call with its input hash and output; the run time unittest prints
    ("Ran 1 test in 0.016s") is the one part of an output that may differ."""
    return [
        (e.name, e.input_hash, re.sub(r" in \d+\.\d+s", " in Ns", e.payload["output"]))
        for e in TraceEvent.objects.filter(unit=unit, kind=TraceKind.TOOL_CALL).order_by("seq")
    ]


def test_a_recorded_run_replays_to_the_same_result(tmp_path: Path) -> None:
    original = demo_repo_create(tmp_path / "original")
    unit, records = record(original)
    trace = trace_write(tmp_path / "recorded.jsonl", records)

    copy = demo_repo_create(tmp_path / "copy")
    result = replay_run(trace, project_path=copy)
    [task] = result.tasks()
    assert task.status == "done", task.status_reason
    replayed = Unit.objects.get(task=task)
    assert replayed.model.startswith("replay/")
    assert calls(replayed) == calls(unit)  # same calls, same inputs, same outputs
    tree = "main^{tree}"
    assert git(copy, "rev-parse", tree) == git(original, "rev-parse", tree)
    merged = git(copy, "show", "--stat", "--format=", "main^2").split("\n")
    assert [line.split("|")[0].strip() for line in merged[:-1]] == ["farewell.py", "greet.py"]
    assert (replayed.tokens_in, replayed.tokens_out) == (unit.tokens_in, unit.tokens_out)


def test_a_changed_tool_input_is_a_miss_that_never_reaches_a_live_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    _, records = record(demo_repo_create(tmp_path / "original"))
    for step in (r for r in records if r["type"] == "model_step"):
        for call in step["tool_calls"]:
            if call["name"] == "write_file":  # the model now writes something else
                call["arguments"] = json.dumps({"path": "farewell.py", "content": "changed\n"})
    trace = trace_write(tmp_path / "diverged.jsonl", records)
    settings.SF_MODEL_FALLBACK = "openai/gpt-4o"  # a live model is configured, and unused
    settings.SF_MODEL_SMART = "openai/gpt-4o"
    models: list[str] = []  # every model litellm is asked for, live or not
    litellm = llm.litellm_module()
    real_completion = litellm.completion

    def watching(**kwargs: Any) -> Any:
        models.append(kwargs["model"])
        return real_completion(**kwargs)

    monkeypatch.setattr(litellm, "completion", watching)
    copy = demo_repo_create(tmp_path / "copy")
    result = replay_run(trace, project_path=copy)
    [task] = result.tasks()
    assert task.status == "failed"
    assert "tool call #2 differs from the recording" in task.status_reason
    assert models
    assert all(model.startswith("replay/") for model in models), models
    assert not (copy / "farewell.py").exists()
    unit = Unit.objects.get(task=task)
    assert [name for name, _, _ in calls(unit)] == ["read_file"]  # the miss never ran


def test_sf_replay_prints_the_outcome_and_exits_by_it(tmp_path: Path) -> None:
    _, records = record(demo_repo_create(tmp_path / "original"))
    trace = trace_write(tmp_path / "recorded.jsonl", records)
    code, out, _ = run_sf(
        "replay",
        str(trace),
        "--project",
        str(demo_repo_create(tmp_path / "b")),
        "--output-format",
        "json",
    )
    assert code == 0
    result = json.loads(out)
    assert (result["ok"], result["units"]) == (True, 1)
    assert result["tasks"][0]["status"] == "done"
    (tmp_path / "broken.jsonl").write_text('{"type": "header"}\nnot json\n')
    code, _, err = run_sf(
        "replay", str(tmp_path / "broken.jsonl"), "--project", str(tmp_path / "b")
    )
    assert code == 2
    assert "broken.jsonl" in err


def test_sf_gate_prints_the_decision_rule_and_risk_class() -> None:
    code, out, _ = run_sf(
        "gate",
        "--profile",
        "normal",
        "--tool",
        "run_command",
        "--input",
        '{"command": "git push origin main"}',
        "--output-format",
        "json",
    )
    assert code == 0
    decision = json.loads(out)
    assert (decision["decision"], decision["rule"], decision["risk_class"]) == (
        "ask",
        "profile.normal.git-remote",
        "git-remote",
    )
    code, out, _ = run_sf(
        "gate",
        "--profile",
        "restricted",
        "--tool",
        "write_file",
        "--input",
        '{"path": "a.txt", "content": "x"}',
    )
    assert code == 0
    assert out.startswith("DENY")
    code, _, err = run_sf(
        "gate", "--profile", "normal", "--tool", "run_command", "--input", "{oops"
    )
    assert code == 2
    assert "--input is not JSON" in err


def test_sf_redact_masks_stdin() -> None:
    key = "AKIA" + "Q3EGRIO5NZJ7WXKV"
    done = subprocess.run(
        [sys.executable, "manage.py", "sf", "redact", "--findings"],
        input=f"aws_access_key_id = {key}\nhello world\n",
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        env={**__import__("os").environ, "DATABASE_URL": child_database_url("redact")},
    )
    assert done.returncode == 0, done.stderr
    assert key not in done.stdout
    assert "hello world" in done.stdout
    assert "aws" in done.stderr.lower()


def test_sf_record_exports_a_live_unit_that_replays_and_says_who_made_it(tmp_path: Path) -> None:
    original = demo_repo_create(tmp_path / "original")
    unit, _ = record(original)
    path = unit_record(unit_id=unit.pk, path=tmp_path / "live.jsonl")
    header = json.loads(path.read_text().splitlines()[0])
    assert header["model"] == "openai/gpt-4o"
    assert header["note"].startswith("Recorded from a live run of openai/gpt-4o: unit")
    assert yaml.safe_load(header["plan_yaml"])["tasks"][0]["key"] == "farewell"

    copy = demo_repo_create(tmp_path / "copy")
    result = replay_run(path, project_path=copy)
    [task] = result.tasks()
    assert task.status == "done", task.status_reason
    replayed = Unit.objects.get(task=task)
    assert calls(replayed) == calls(unit)
    with pytest.raises(SfError, match="did not ask a live model"):
        unit_record(unit_id=replayed.pk, path=tmp_path / "again.jsonl")
    with pytest.raises(SfError, match="no unit 999999"):
        unit_record(unit_id=999999, path=tmp_path / "none.jsonl")
    code, out, _ = run_sf("record", str(unit.pk), "--out", str(tmp_path / "cli.jsonl"))
    assert (code, out.split(":")[0]) == (0, f"wrote {tmp_path / 'cli.jsonl'}")
    assert (tmp_path / "cli.jsonl").read_text() == path.read_text().replace(
        header["note"], json.loads((tmp_path / "cli.jsonl").read_text().splitlines()[0])["note"]
    )
    code, _, err = run_sf("record", str(replayed.pk), "--out", str(tmp_path / "no.jsonl"))
    assert (code, err.strip()) == (
        2,
        f"error: unit {replayed.pk} did not ask a live model (model: {replayed.model})",
    )
