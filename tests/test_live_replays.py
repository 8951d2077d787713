"""The live model's recorded runs, replayed through the whole engine: what SF does with
what the model did, every time, without asking the model again.

Each trace under tests/fixtures/live/ was recorded from a real run of the local model
(tests/fixtures/record_live_traces.py, the cases of tests/live/cases.py; its header names
the model, the date, the machine and its load). Replaying it runs everything but the
model for real: the repository the recording started from, each unit's git worktree,
the permission gate, the sandboxed commands, the skill loader, the verify commands,
trusted review and the merge queue. The model steps come from the recording, and every
tool call must match the recorded one (name and input hash) or the unit fails (a
``ReplayMiss``) — it never falls back to a live model. These replace the live tests of
the harder intents and of the skill, which asked the model each CI run (docs/testing.md).
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

from agents_app.models import TraceEvent, TraceKind
from agents_app.runtime import llm
from agents_app.runtime.replay import replay_load
from skills_app.loader import names_the_body
from skills_app.models import SkillUse
from tasks_app.engine.replaying import replay_run
from tasks_app.models import Unit
from tests.live.unattended import repo_make

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]
FIXTURES = Path(__file__).parent / "fixtures" / "live"
TRACES = sorted(FIXTURES.glob("*.jsonl"))


class Requests:
    """Every request the engine sends to the (replayed) model: its model and messages."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.models: list[str] = []
        self.texts: list[str] = []  # as sent: the loop goes on appending to its list
        litellm = llm.litellm_module()
        real = litellm.completion

        def watching(**kwargs: Any) -> Any:
            self.models.append(kwargs["model"])
            self.texts.append("\n".join(str(m.get("content") or "") for m in kwargs["messages"]))
            return real(**kwargs)

        monkeypatch.setattr(litellm, "completion", watching)

    def text(self, number: int) -> str:
        """Request ``number`` (from 0) as the model received it, all messages joined."""
        return self.texts[number]


def replayed(trace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    header = replay_load(trace).header
    # The unit's step bound the recording ran under: a unit that the bound ended then
    # ends so again (the timeouts are not applied: a replay takes seconds).
    monkeypatch.setattr(settings, "SF_UNIT_MAX_STEPS", int(header["limits"]["SF_UNIT_MAX_STEPS"]))
    repo = repo_make(header["repo_files"], tmp_path / "repo")
    requests = Requests(monkeypatch)
    run = replay_run(trace, project_path=repo)
    return header, repo, run, requests


def how_it_ended(run: Any) -> str:
    """Each task and unit of a replay with its reason: what a failure message shows (a
    replay that diverged names the call, e.g. "tool call #2 differs from the recording")."""
    lines = []
    for task in run.tasks():
        lines.append(f"task {task.key}: {task.status} {task.status_reason}".rstrip())
        for unit in Unit.objects.filter(task=task).order_by("attempt"):
            lines.append(f"  attempt {unit.attempt}: {unit.status}: {unit.summary[:300]}")
    return "\n".join(lines)


def stable(output: object) -> str:
    """A tool's output without what differs from run to run: a command's own timing and
    where the unit's worktree is (an error may name it), and so how like a search that
    named the worktree edit_file found the file's lines."""
    text = re.sub(r"\d+\.\d+s", "Ns", str(output))
    text = re.sub(r"line \d+, are [\d.]+% similar", "line N, are N% similar", text)
    return re.sub(r"/[^\s:'\"]*/worktrees/\d+/p\d+-[\w.-]+", "<worktree>", text)


def outputs(unit: Unit) -> list[tuple[str, str]]:
    """Each tool call and its output (``stable``)."""
    return [
        (e.name, stable(e.payload.get("output", "")))
        for e in TraceEvent.objects.filter(unit=unit, kind=TraceKind.TOOL_CALL).order_by("seq")
    ]


def test_every_recording_says_who_made_it() -> None:
    assert TRACES, f"no recordings under {FIXTURES}"
    for trace in TRACES:
        header = replay_load(trace).header
        assert header["model"].startswith("openai/qwen2.5-coder"), trace.name
        assert re.match(r"\d{4}-\d\d-\d\dT", header["recorded_at"]), trace.name
        assert "cores" in header["machine"], trace.name
        assert "not written by hand" in header["note"], trace.name


@pytest.mark.parametrize("trace", TRACES, ids=lambda path: path.stem)
def test_a_recording_replays_to_the_outcome_it_had(
    trace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Same units, same ends, same tool outputs as the live run; and clean: every task
    final with a reason if it failed, no worktree left but a failed task's."""
    header, repo, run, requests = replayed(trace, tmp_path, monkeypatch)
    units = list(Unit.objects.filter(task__plan=run.plan).select_related("task").order_by("pk"))
    ended = how_it_ended(run)
    replayed_units = [f"{u.task.key} attempt {u.attempt}: {u.status}" for u in units]
    assert replayed_units == header["units"], f"the replay ended otherwise:\n{ended}"
    assert requests.models, "the replay never asked the (replayed) model"
    assert all(model.startswith("replay/") for model in requests.models), requests.models
    recorded = [
        (r["name"], stable(r.get("output", "")))
        for r in (line for line in _records(trace) if line["type"] == "tool_call")
        if r.get("input_hash")
    ]
    ran = [call for unit in units for call in outputs(unit)]
    assert ran == recorded, f"the tools answered otherwise than when recorded:\n{ended}"
    for task in run.tasks():
        assert task.status in ("done", "failed"), ended
        if task.status == "failed":
            assert task.status_reason, ended
    trees = subprocess.run(
        ["git", "worktree", "list"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.splitlines()[1:]
    assert len(trees) == sum(task.status == "failed" for task in run.tasks()), trees


def test_the_model_loads_the_skill_lazily_and_its_body_reaches_it_through_the_tool(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, repo, run, requests = replayed(FIXTURES / "skill.jsonl", tmp_path, monkeypatch)
    [task] = run.tasks()
    assert task.status == "done", how_it_ended(run)
    unit = Unit.objects.get(task=task, status="succeeded")
    body = "Three asterisks, a space, the words"  # in the skill's body only
    # The first prompt offers the skill by its description, never its body.
    assert "- release-banner: Use when creating or changing banner.txt" in requests.text(0)
    assert body not in requests.text(0)
    calls = list(TraceEvent.objects.filter(unit=unit, kind=TraceKind.TOOL_CALL, name="load_skill"))
    assert any(body in call.payload["output"] for call in calls)
    # Each call is one use of the skill by that unit, written while the call ran (not
    # before the model asked), allowed exactly when the body came back.
    uses = list(SkillUse.objects.filter(unit=unit, skill__name="release-banner").order_by("pk"))
    assert len(uses) == len(calls)
    for use, call in zip(uses, calls, strict=True):
        assert use.by_model
        assert use.allowed == (body in call.payload["output"]), call.payload
        # A file that names the skill itself (this model passes file="release-banner"
        # with the name) is the body: a load, not a supporting file.
        file = call.payload["arguments"].get("file") or ""
        assert use.kind == ("file" if file and not names_the_body(use.skill, file) else "load")
        assert call.finished_at is not None
        assert call.started_at <= use.created_at <= call.finished_at
    # The body went back to the model as the tool's answer, in the requests after it.
    assert any(body in text for text in requests.texts[1:])
    merged = subprocess.run(
        ["git", "show", "main:banner.txt"], cwd=repo, capture_output=True, text=True, check=True
    )
    assert merged.stdout.strip() == "*** SF release 7 ***"


def _records(trace: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in trace.read_text().splitlines() if line.strip()]
