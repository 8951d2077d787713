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
import time
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from django.utils.html import escape

from agents_app.models import TraceEvent, TraceKind
from agents_app.runtime import llm
from agents_app.runtime.llm import ModelStep
from agents_app.runtime.replay import replay_load
from agents_app.runtime.textcalls import recognise_step
from agents_app.runtime.tools import TOOLS
from agents_app.services import project_create
from conftest import grant
from skills_app.loader import names_the_body
from skills_app.models import SkillUse
from tasks_app.engine import attempts
from tasks_app.engine.replaying import demo_repo_create, replay_run
from tasks_app.features.line_comments import diff_line_text
from tasks_app.features.model_review.prompt import READ_ONLY_TOOLS, VERDICT, VERDICT_TOOL
from tasks_app.models import AttemptRound, DiffComment, ModelReview, Unit
from tests.live.unattended import repo_make

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]
FIXTURES = Path(__file__).parent / "fixtures" / "live"
TRACES = sorted(FIXTURES.glob("*.jsonl"))
# The whole runs of record_live_traces.py (their header names the repository they began
# from); the model review's recording (record_model_review.py) has its own test.
RUNS = [trace for trace in TRACES if "repo_files" in replay_load(trace).header]
# Of those, the runs of a best-of-N task (their header says what each round kept).
ROUNDS = [trace for trace in RUNS if "rounds" in replay_load(trace).header]
# Runs whose own test replays them (and checks what the generic test does, and more).
OWN_TEST = {"instructions", "followup"}


class Requests:
    """Every request the engine sends to the (replayed) model: its model and messages."""

    def __init__(
        self, monkeypatch: pytest.MonkeyPatch, during: dict[int, Callable[[], None]] | None = None
    ) -> None:
        """``during``: what a person does while the model answers request N (from 0)."""
        self.models: list[str] = []
        self.texts: list[str] = []  # as sent: the loop goes on appending to its list
        litellm = llm.litellm_module()
        real = litellm.completion
        acts = during or {}

        def watching(**kwargs: Any) -> Any:
            self.models.append(kwargs["model"])
            self.texts.append("\n".join(str(m.get("content") or "") for m in kwargs["messages"]))
            if len(self.texts) - 1 in acts:
                acts[len(self.texts) - 1]()
            return real(**kwargs)

        monkeypatch.setattr(litellm, "completion", watching)

    def text(self, number: int) -> str:
        """Request ``number`` (from 0) as the model received it, all messages joined."""
        return self.texts[number]


def replayed(
    trace: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    during: dict[int, Callable[[], None]] | None = None,
) -> Any:
    header = replay_load(trace).header
    # The unit's step bound the recording ran under: a unit that the bound ended then
    # ends so again (the timeouts are not applied: a replay takes seconds).
    monkeypatch.setattr(settings, "SF_UNIT_MAX_STEPS", int(header["limits"]["SF_UNIT_MAX_STEPS"]))
    repo = repo_make(header["repo_files"], tmp_path / "repo")
    if header.get("policy"):  # the project's, as recorded (a round's variants)
        project_create(name="recorded", repo_path=str(repo.resolve()), policy=header["policy"])
    requests = Requests(monkeypatch, during)
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
        assert header["model"].removeprefix("openai/").startswith("qwen2.5-coder"), trace.name
        assert re.match(r"\d{4}-\d\d-\d\dT", header["recorded_at"]), trace.name
        assert "cores" in header["machine"], trace.name
        assert "not written by hand" in header["note"], trace.name


@pytest.mark.parametrize(
    "trace",
    [t for t in RUNS if t not in ROUNDS and t.stem not in OWN_TEST],
    ids=lambda path: path.stem,
)
def test_a_recording_replays_to_the_outcome_it_had(
    trace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Same units, same ends, same tool outputs as the live run; and clean: every task
    final with a reason if it failed, no worktree left but a failed task's."""
    as_recorded(trace, *replayed(trace, tmp_path, monkeypatch))


def as_recorded(trace: Path, header: dict[str, Any], repo: Path, run: Any, requests: Any) -> None:
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


def test_the_local_models_recorded_review_is_read_stored_and_shown_beside_the_diff(
    tmp_path: Path, user: User, logged_in_client: Client
) -> None:
    """The unit's steps (scripted when recorded) and then the local model's review of
    its diff, replayed through the engine's ``verified`` point: the verdict the model
    gave is parsed, its line comments stored on the diff's lines, all on the unit page."""
    trace = FIXTURES / "model_review.jsonl"
    recorded = replay_load(trace).header["recorded_review"]
    repo = demo_repo_create(tmp_path / "greet")
    policy = {"model_review": {"mode": "advisory", "max_steps": 6}}
    project = project_create(name="reviewed", repo_path=str(repo.resolve()), policy=policy)
    grant(user, project, "viewer")

    run = replay_run(trace, project_path=repo)

    [task] = run.tasks()
    assert task.status == "review", how_it_ended(run)
    unit = Unit.objects.get(task=task)
    review = ModelReview.objects.get(unit=unit)
    assert review.model.startswith("replay/")  # the recording answered, no live model
    assert review.verdict in ("approve", "request_changes"), review.notes
    assert (review.verdict, review.reasons, review.notes) == (
        recorded["verdict"],
        recorded["reasons"],
        recorded["notes"],
    )
    steps = [r for r in _records(trace) if r["type"] == "model_step" and r.get("stage")]
    assert review.tokens_in == sum(int(step.get("tokens_in", 0)) for step in steps)
    [given] = [r for r in _records(trace) if r["type"] == "tool_call" and r.get("stage")]
    comments = list(DiffComment.objects.filter(unit=unit, by_model=True).order_by("pk"))
    assert comments, "the model commented on a line"
    assert [(c.path, c.line, c.side, c.text) for c in comments] == [
        (c["path"], c["line"], c["side"], c["text"]) for c in given["input"]["comments"]
    ]
    for c in comments:  # on a line the diff shows (16: a blank line of its context)
        shown = diff_line_text(unit, path=c.path, line=c.line, side=c.side)
        assert shown is not None, c.line
        assert shown == c.line_text, c.line
    # The model wrote its verdict as a fenced JSON block, not a native call; SF read it
    # as the call (textcalls). Read again, the recorded text gives the same call.
    said = ModelStep("m", steps[-1]["content"], [], 0, 0, Decimal(0), None)
    tools = {name: TOOLS[name] for name in READ_ONLY_TOOLS} | {VERDICT_TOOL: VERDICT}
    read = recognise_step(said, tools, [*READ_ONLY_TOOLS, VERDICT_TOOL])
    assert read.from_text, read.refusal
    [call] = read.tool_calls
    assert (call.name, json.loads(call.arguments)) == (VERDICT_TOOL, given["input"])

    page = logged_in_client.get(reverse("unit-detail", args=[unit.pk])).content.decode()
    assert f'data-model-review="{review.verdict}"' in page
    assert escape(review.reasons) in page
    for comment in comments:
        assert f'data-model-comment="{comment.pk}"' in page


@pytest.mark.parametrize("trace", ROUNDS, ids=lambda path: path.stem)
def test_a_recorded_best_of_round_replays_attempt_by_attempt_and_keeps_what_it_kept(
    trace: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    user: User,
    logged_in_client: Client,
) -> None:
    """Two attempts at once, at the variants the recording ran (temperature 0 and 0.4),
    each answering from its own recorded unit though they run in threads; verified,
    ranked, and the round keeps what the recording kept (or nothing), for its reason,
    shown on the task's attempts page. Attempt 1 is held back a second, so attempt 2
    asks first: each must still get its own recorded steps."""
    prepare = attempts.worktree_prepare

    def attempt_2_first(*, task: Any, unit: Unit, ws: Any) -> Any:
        if unit.attempt == 1:
            time.sleep(1)
        return prepare(task=task, unit=unit, ws=ws)

    monkeypatch.setattr(attempts, "worktree_prepare", attempt_2_first)
    header, repo, run, requests = replayed(trace, tmp_path, monkeypatch)
    as_recorded(trace, header, repo, run, requests)
    [recorded] = header["rounds"]
    [task] = run.tasks()
    round_ = AttemptRound.objects.select_related("winner").get(task=task)
    units = list(round_.attempts.order_by("attempt"))
    assert [unit.attempt for unit in units] == [1, 2], how_it_ended(run)
    assert [unit.variant for unit in units] == recorded["variants"]
    assert len({unit.variant["temperature"] for unit in units}) == 2
    assert all(unit.model.startswith("replay/") for unit in units), "no live model"
    # Each attempt made its own recorded unit's calls, with the same outputs.
    assert [outputs(unit) for unit in units] == _calls_by_unit(trace), how_it_ended(run)
    assert round_.reason == recorded["reason"]
    if recorded["kept"] is None:
        assert round_.winner is None
        assert round_.reason.endswith("no attempt kept")
        assert task.status == "failed"
        assert task.status_reason.startswith(f"best-of-2: {round_.reason}")
    else:
        assert round_.winner is not None
        assert round_.winner.attempt == recorded["kept"]
        assert round_.reason.startswith(f"attempt {recorded['kept']} kept: ")
        assert round_.reason in task.transitions.get(to_status="review").reason
    grant(user, run.session.project, "viewer")
    page = logged_in_client.get(reverse("task-attempts", args=[task.pk])).content.decode()
    assert escape(round_.reason) in page
    kept = [f'data-unit="{u.pk}" data-chosen' in page for u in units]
    assert kept == [u.pk == round_.winner_id for u in units]


def _calls_by_unit(trace: Path) -> list[list[tuple[str, str]]]:
    """The recorded tool calls that ran (``stable``), a list per unit: each unit's
    records begin with its instructions line."""
    units: list[list[tuple[str, str]]] = []
    for record in _records(trace):
        if record["type"] == "instructions":
            units.append([])
        elif record["type"] == "tool_call" and record.get("input_hash"):
            units[-1].append((record["name"], stable(record.get("output", ""))))
    return units


def _records(trace: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in trace.read_text().splitlines() if line.strip()]
