"""The slash commands as the engine sees them: /next runs one unit then pauses, /stop
ends the running unit at its next dispatch point, /status and /session-report report
what ``sf headless query`` reports."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agents_app.models import AgentSession, Project, RiskDecision, TraceEvent
from agents_app.services import command_run, project_create, session_create
from agents_app.tests.runtime_helpers import ScriptedModel
from sf_core.actors import Actor
from tasks_app.engine.dispatch import next_units
from tasks_app.engine.drain import drain
from tasks_app.engine.hooks import EngineHooks
from tasks_app.engine.replaying import demo_repo_create
from tasks_app.engine.unit import UnitOptions, unit_run
from tasks_app.features.headless.query import session_snapshot
from tasks_app.models import (
    MergeRequest,
    MergeStatus,
    Plan,
    ScheduleStatus,
    Task,
    TaskSchedule,
    Unit,
)
from tasks_app.schemas import plan_spec_parse
from tasks_app.services import plan_accept, plan_create

pytestmark = pytest.mark.django_db
MODEL = "openai/gpt-4o"
PERSON = Actor.system("person")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return demo_repo_create(tmp_path / "greet")


def start(
    repo: Path,
    *,
    autonomous: bool = True,
    driver: str = "inline",
    chained: bool = False,
    project: Project | None = None,
) -> AgentSession:
    """A session with an accepted two-task plan: first and second, both ready (or
    second after first when ``chained``), in a new project of ``repo`` or in ``project``
    (a repository is one project)."""
    if project is None:
        project = project_create(name=f"p-{Plan.objects.count()}", repo_path=str(repo))
    session = session_create(project=project)
    AgentSession.objects.filter(pk=session.pk).update(driver=driver)
    tasks = [task_spec("first"), task_spec("second", depends_on=["first"] if chained else [])]
    plan = plan_create(
        session=session, spec=plan_spec_parse({"summary": "s", "tasks": tasks}), source="api"
    )
    plan_accept(
        plan=plan, actor=PERSON, autonomous=autonomous, permission_profile="trusted", start=False
    )
    session.refresh_from_db()
    return session


def task_spec(key: str, **extra: Any) -> dict[str, Any]:
    return {
        "key": key,
        "title": f"Write {key}.txt",
        "acceptance_criteria": [f"{key}.txt exists"],
        "verify": [f"test -f {key}.txt"],
        "risk_level": "low",
        **extra,
    }


def writes(key: str) -> list[tuple[str, list[tuple[str, Any]]]]:
    return [
        ("writing", [("write_file", {"path": f"{key}.txt", "content": "hi"})]),
        ("done", [("finish", {"summary": f"wrote {key}.txt"})]),
    ]


def options(*steps: Any) -> UnitOptions:
    return UnitOptions(model=MODEL, completion=ScriptedModel(*steps))


# --- /next ----------------------------------------------------------------------------


@pytest.mark.parametrize("autonomous", [False, True])
def test_next_runs_one_unit_then_pauses_and_keeps_the_run_control(
    repo: Path, autonomous: bool
) -> None:
    session = start(repo, autonomous=autonomous)
    control = session.run_control
    command_run(session=session, text="/next", actor=PERSON)

    ran = drain(
        session_id=session.pk, worker="t", options=options(*writes("first"), *writes("second"))
    )

    session.refresh_from_db()
    assert ran == 1, "exactly one unit"
    assert Unit.objects.get().task.key == "first"
    assert session.paused
    assert session.pause_reason == "/next: one unit done; /next runs another"
    assert session.run_control == control, "the run control is not changed"
    assert not session.step_requested, "the step is used up"
    assert next_units(session) == []

    command_run(session=session, text="/next", actor=PERSON)  # the next step
    assert drain(session_id=session.pk, worker="t", options=options(*writes("second"))) == 1
    assert Unit.objects.count() == 2


def test_through_the_workers_a_step_is_one_unit_at_a_time(repo: Path) -> None:
    session = start(repo, autonomous=False, driver="workers")
    assert next_units(session) == [], "manual: nothing on its own"
    outcome = command_run(session=session, text="/next", actor=PERSON)
    first = TaskSchedule.objects.get(task__key="first")
    assert next_units(outcome.session) == [first.task_id]
    TaskSchedule.objects.filter(pk=first.pk).update(status=ScheduleStatus.DISPATCHED)
    assert next_units(outcome.session) == [], "a unit in flight is the step"


# --- /stop ----------------------------------------------------------------------------


def test_stop_during_a_unit_cancels_it_at_the_next_dispatch_point(repo: Path) -> None:
    session = start(repo)
    model = ScriptedModel(*writes("first"))
    said: list[str] = []

    def stop_while_thinking(**kwargs: Any) -> Any:
        said.append(command_run(session=session, text="/stop", actor=PERSON).message)
        return model(**kwargs)  # the model's answer comes back; the tool call never runs

    report = unit_run(
        task_id=TaskSchedule.objects.get(task__key="first").task_id,
        worker="t",
        options=UnitOptions(model=MODEL, completion=stop_while_thinking),
    )

    assert report is not None
    unit = Unit.objects.get()
    session.refresh_from_db()
    assert said[0].startswith(
        "stopped: no more units start; the running unit stops at its next dispatch point"
    )
    assert (report.outcome, report.task_status) == ("interrupted", "paused")
    assert (unit.status, unit.summary) == ("cancelled", "stopped by /stop")
    assert unit.task.hold_reason == "stopped", "held, not left in progress"
    assert not (repo / "first.txt").exists(), "the tool call never ran"
    assert (session.run_control, session.activity) == ("manual", "idle")
    assert next_units(session) == [], "dispatch stopped"


def test_a_unit_sent_before_stop_does_not_start(repo: Path) -> None:
    session = start(repo, driver="workers")
    task_id = next_units(session)[0]  # sent to a worker, not yet started
    command_run(session=session, text="/stop", actor=PERSON)

    assert unit_run(task_id=task_id, worker="late", options=options(*writes("first"))) is None
    assert Unit.objects.count() == 0
    assert TaskSchedule.objects.get(task_id=task_id).status == ScheduleStatus.DUE


# --- steering between two calls of one model step -----------------------------------
# A unit's calls reuse the reading of the session taken before the model step; the
# gate stores each decision only while that reading is current (its dispatch version).


def two_writes_in_one_step() -> list[tuple[str, list[tuple[str, Any]]]]:
    calls = [("write_file", {"path": f"{key}.txt", "content": "hi"}) for key in ("a", "b")]
    return [("writing", calls), ("done", [("finish", {"summary": "wrote"})])]


def between_the_calls(monkeypatch: pytest.MonkeyPatch, act: Any) -> None:
    """Run ``act`` once, after the step's first call and before its second."""
    after_tool = EngineHooks.after_tool
    done: list[bool] = []

    def acting(self: EngineHooks, tool: str, input_hash: str) -> str | None:
        if not done:
            done.append(True)
            act()
        return after_tool(self, tool, input_hash)

    monkeypatch.setattr(EngineHooks, "after_tool", acting)


def run_first(session: AgentSession) -> Any:
    return unit_run(
        task_id=TaskSchedule.objects.get(task__key="first").task_id,
        worker="t",
        options=options(*two_writes_in_one_step()),
    )


def written() -> list[str]:
    """What each write_file call of the unit answered, in order."""
    events = TraceEvent.objects.filter(kind="tool_call", name="write_file").order_by("seq")
    return [event.payload["output"] for event in events]


@pytest.mark.parametrize(
    "command", ["/permission-profile restricted", "/steer permission-profile restricted now"]
)
def test_a_steer_during_a_step_decides_its_next_call(
    repo: Path, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    session = start(repo)
    between_the_calls(monkeypatch, lambda: command_run(session=session, text=command, actor=PERSON))

    run_first(session)

    first, second = RiskDecision.objects.filter(tool="write_file").order_by("pk")
    assert (first.permission_profile, first.decision) == ("trusted", "allow")
    assert second.permission_profile == "restricted", "decided on the steered session"
    assert second.decision != "allow"
    assert written()[1].startswith(("denied", "waiting")), "the second write never ran"


def test_a_pause_during_a_step_stops_the_unit_before_its_next_call(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = start(repo)
    between_the_calls(
        monkeypatch, lambda: command_run(session=session, text="/pause", actor=PERSON)
    )

    report = run_first(session)

    assert report is not None
    assert report.outcome == "interrupted"
    assert RiskDecision.objects.filter(tool="write_file").count() == 1
    assert len(written()) == 1, "the second write never ran"


def test_without_a_change_the_calls_of_a_step_read_the_session_once(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = start(repo)
    reads: list[int] = []
    read = EngineHooks._read

    def counting(self: EngineHooks, point: Any) -> AgentSession:
        reads.append(1)
        return read(self, point)

    monkeypatch.setattr(EngineHooks, "_read", counting)

    run_first(session)

    assert RiskDecision.objects.filter(tool="write_file", decision="allow").count() == 2
    assert len(written()) == 2
    assert len(reads) == 2, "once before each model step, none for the calls"


# --- /status and /session-report ------------------------------------------------------


def test_status_and_session_report_say_what_headless_query_says(repo: Path) -> None:
    session = start(repo, autonomous=False, chained=True)
    RiskDecision.objects.create(
        session=session,
        tool="run_command",
        input_normalized={"command": "curl example.com"},
        input_hash="0" * 64,
        risk_class="network",
        decision="ask",
        rule="network: ask",
        reason="wants the network",
        review_status="pending",
        **session.axes.as_dict(),
    )
    query = session_snapshot(session_id=session.pk, project=None)

    status = command_run(session=session, text="/status", actor=PERSON)
    report = command_run(session=session, text="/session-report", actor=PERSON)

    assert status.message.splitlines()[:2] == [
        "SF build | manual | trusted | deep · active",
        "no unit running",
    ]
    assert "tasks: 2 tasks: 2 todo · 1 ready · $0.0000 spent" in status.message.splitlines()
    assert "approvals pending: 1" in status.message.splitlines()
    lines = report.message.splitlines()
    assert lines[0] == query["summary"]
    plan = query["plans"][0]
    assert f"plan #{plan['id']} (accepted): s" in lines
    assert any(line.startswith("  first todo") for line in lines)
    assert any(line.startswith("  second todo · next: waiting for first") for line in lines)
    approval = query["pending_approvals"][0]
    assert f"approval pending: #{approval['id']} run_command: wants the network" in lines
    assert lines[-1].startswith("totals: 2 todo · $0.0000 spent")
    assert report.data["snapshot"]["tasks"] == query["tasks"], "the same data as the query"


def test_no_new_unit_starts_while_the_projects_merge_queue_is_full(
    repo: Path, settings: Any
) -> None:
    """Back-pressure: approved tasks waiting to merge keep their worktrees; a project
    starts at most SF_MERGE_BACKLOG_LIMIT less those waiting new units at once."""
    settings.SF_MERGE_BACKLOG_LIMIT = 2
    session = start(repo)
    first, second = (TaskSchedule.objects.get(task__key=key).task_id for key in ("first", "second"))
    assert next_units(session) == [first, second]
    other = start(repo, project=session.project)  # another session's tasks fill its queue
    waiting = [
        MergeRequest.objects.create(
            project=session.project, base_branch="main", task=task, status=MergeStatus.QUEUED
        )
        for task in Task.objects.filter(plan__session=other)
    ]
    assert next_units(session) == [], "two merges waiting: the limit"
    MergeRequest.objects.filter(pk=waiting[0].pk).update(status=MergeStatus.MERGED)
    assert next_units(session) == [first], "one merged: one slot, one unit"
    MergeRequest.objects.filter(pk=waiting[1].pk).update(status=MergeStatus.MERGED)
    assert next_units(session) == [first, second], "the queue drained"
    TaskSchedule.objects.filter(task_id=first).update(status=ScheduleStatus.DISPATCHED)
    assert next_units(session) == [second], "a unit in flight takes a slot"
    MergeRequest.objects.filter(pk=waiting[0].pk).update(status=MergeStatus.QUEUED)
    assert next_units(session) == [], "one unit in flight and one merge waiting: the limit"
