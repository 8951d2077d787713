"""What reached the local model's prompt in a recorded run, replayed through the engine
(tests/test_live_replays.py says how): the repository's instruction file (AGENTS.md,
docs/repository-instructions.md) and a person's follow-up sent while the unit ran
(docs/follow-ups.md). Both recorded from Qwen2.5-Coder-1.5B by
tests/fixtures/record_live_traces.py (cases ``instructions`` and ``followup`` of
tests/live/cases.py); no model server here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from agents_app.models import TraceEvent, TraceKind
from agents_app.runtime.instructions import HEADING, instructions_read
from conftest import grant
from sf_core.actors import Actor
from tasks_app.features.followups.services import followup_send
from tasks_app.models import FollowUp, Unit, UnitStatus
from tests.test_live_replays import FIXTURES, _records, as_recorded, how_it_ended, replayed

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]
RULE = "# SPDX-License-Identifier: MIT"  # the house rule, in the recorded AGENTS.md only


def test_the_repositorys_agents_md_reaches_the_units_prompt_and_the_run_ends_as_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    trace = FIXTURES / "instructions.jsonl"
    header, repo, run, requests = replayed(trace, tmp_path, monkeypatch)
    as_recorded(trace, header, repo, run, requests)
    assert RULE in header["repo_files"]["AGENTS.md"]
    assert RULE not in header["plan_yaml"], "the task must not say the rule itself"
    [recorded] = [r for r in _records(trace) if r["type"] == "instructions"]
    assert [f["path"] for f in recorded["files"]] == ["AGENTS.md"]
    # The recorded section is what SF reads from that repository today, within the
    # budget the model's window gave: a change to the reading shows here.
    [task] = run.tasks()
    again = instructions_read(repo, list(task.intent_claim), budget=recorded["budget"])
    assert again.section() == recorded["section"]
    # The model's first request held the file, under the section's heading, as the
    # repository's words; the unit's trace names the file it was given.
    first = requests.text(0)
    assert f"{HEADING}\n" in first
    assert f"----- begin AGENTS.md -----\n{header['repo_files']['AGENTS.md'].rstrip()}" in first
    unit = Unit.objects.get(task=task)
    event = TraceEvent.objects.get(unit=unit, kind=TraceKind.NOTE, name="instructions")
    assert event.payload["replayed"] is True
    assert [f["path"] for f in event.payload["files"]] == ["AGENTS.md"]
    # The model followed it: its first write began with the rule (which no word of the
    # task, its criteria or its verify commands says).
    [first_write, *_] = TraceEvent.objects.filter(
        unit=unit, kind=TraceKind.TOOL_CALL, name="write_file"
    ).order_by("seq")
    assert first_write.payload["arguments"]["content"].splitlines()[0] == RULE


def test_a_persons_followup_reaches_the_running_units_next_model_request_as_theirs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sent through the service the web calls, while the model answers the request the
    recording sent it during; the next request carries it, marked as that person's."""
    trace = FIXTURES / "followup.jsonl"
    records = _records(trace)
    said = records[0]["followup"]
    [given] = [r for r in records if r["type"] == "followup"]
    assert (given["author"], given["text"]) == (said["author"], said["text"])
    # Delivered before model step N (from 0) of the recording: sent while step N-1 ran.
    at = sum(r["type"] == "model_step" for r in records[: records.index(given)])
    assert at >= 1, "the recording's follow-up came before the model's first step"
    person = User.objects.create_user(said["author"])
    sent: list[Any] = []

    def send() -> None:
        unit = Unit.objects.select_related("task__plan__session__project").get(
            status=UnitStatus.RUNNING
        )
        grant(person, unit.task.plan.session.project, "operator")
        sent.append(followup_send(text=said["text"], actor=Actor.of(person), unit=unit))

    header, repo, run, requests = replayed(trace, tmp_path, monkeypatch, during={at - 1: send})
    as_recorded(trace, header, repo, run, requests)
    assert [s.delivery for s in sent] == ["unit 1 reads it before its next step"]
    words = f"A message from {person.username} ("
    assert words not in requests.text(at - 1)
    assert words in requests.text(at)
    assert said["text"] in requests.text(at)
    [task] = run.tasks()
    unit = Unit.objects.get(task=task)
    followup = FollowUp.objects.get()
    assert (followup.author, followup.unit_id, followup.delivered_unit_id) == (
        person,
        unit.pk,
        unit.pk,
    )
    # Taken where the recording took it: between the same model steps and tool calls.
    kinds: dict[str, str] = {TraceKind.MODEL_STEP: "model_step", TraceKind.TOOL_CALL: "tool_call"}
    events = TraceEvent.objects.filter(unit=unit).order_by("seq")
    replayed_order = [
        kinds.get(e.kind) or "followup"
        for e in events
        if e.kind in kinds or (e.kind == TraceKind.NOTE and e.name == "followup")
    ]
    recorded_order = [r["type"] for r in records if r["type"] in (*kinds.values(), "followup")]
    assert replayed_order == recorded_order, how_it_ended(run)
    note = events.get(kind=TraceKind.NOTE, name="followup")
    assert (note.payload["author"], note.payload["text"]) == (person.username, said["text"])
