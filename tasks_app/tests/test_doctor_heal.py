"""/doctor, /doctor fix and /doctor heal through the one command grammar, and the
repair unit /doctor heal queues: repair work mode, the repair tools only, the doctor's
report as its brief — recorded once against a scripted model, then replayed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from agents_app import commands as cmd
from agents_app.access import AccessDenied
from agents_app.models import AgentSession, RepairRecord, TraceEvent, TraceKind
from agents_app.runtime.recording import trace_export, trace_write
from agents_app.services import project_create, session_create
from agents_app.services.commands import command_run
from agents_app.tests.runtime_helpers import ScriptedModel
from conftest import grant
from sf_core.actors import Actor
from sf_core.doctor import doctor_run
from sf_core.errors import CommandRejected
from tasks_app.engine.drain import drain
from tasks_app.engine.replaying import demo_repo_create
from tasks_app.engine.unit import UnitOptions, unit_run
from tasks_app.models import Plan, Unit, Worker
from tasks_app.workspaces import workspace_of

pytestmark = pytest.mark.django_db
MODEL = "openai/gpt-4o"
STEPS = [
    ("Reading the readme the base branch changed.", [("read_file", {"path": "greet.py"})]),
    ("Trying to write.", [("write_file", {"path": "fixed.txt", "content": "x\n"})]),
    ("Listing.", [("run_command", {"command": "ls"})]),
    ("Done.", [("finish", {"summary": "greet.py has uncommitted changes on main"})]),
]


def test_the_grammar() -> None:
    assert cmd.parse("/doctor") == cmd.Doctor()
    assert cmd.parse("/doctor fix") == cmd.Doctor(action=cmd.DoctorAction.FIX)
    assert cmd.parse("/doctor heal") == cmd.Doctor(action=cmd.DoctorAction.HEAL)
    with pytest.raises(CommandRejected, match="/doctor takes nothing, fix or heal; got 'now'"):
        cmd.parse("/doctor now")


def test_a_viewer_inspects_and_only_an_admin_fixes(
    agent_session: AgentSession, user: User, staff_user: User
) -> None:
    grant(staff_user, agent_session.project, "viewer")
    viewer = Actor.of(staff_user)
    assert (
        "checks" in command_run(session=agent_session, text="/doctor", actor=viewer).data["report"]
    )
    with pytest.raises(AccessDenied):
        command_run(session=agent_session, text="/doctor fix", actor=viewer)
    with pytest.raises(AccessDenied):
        command_run(session=agent_session, text="/doctor heal", actor=viewer)


def test_doctor_fix_records_its_repairs_with_the_session(
    agent_session: AgentSession, user: User
) -> None:
    lock = Path(agent_session.project.repo_path, ".git", "index.lock")
    lock.write_text("")
    import os

    os.utime(lock, (1_000_000_000, 1_000_000_000))

    outcome = command_run(session=agent_session, text="/doctor fix", actor=Actor.of(user))

    assert f"fixed locks.dead: {lock}: stale git lock removed" in outcome.message
    record = RepairRecord.objects.get()
    assert (record.session, record.actor_label) == (agent_session, "ada")
    again = command_run(session=agent_session, text="/doctor fix", actor=Actor.of(user))
    assert "nothing to repair" in again.message


def test_heal_is_refused_when_every_check_passes(agent_session: AgentSession, user: User) -> None:
    now = timezone.now()
    Worker.objects.create(hostname="celery@elsewhere", pid=1, started_at=now, last_heartbeat_at=now)
    report = doctor_run()
    # Notes (a repository without AGENTS.md) are not failures: nothing to heal either.
    assert report.severity in {"ok", "info"}, report.brief()
    with pytest.raises(CommandRejected, match="nothing to heal"):
        command_run(session=agent_session, text="/doctor heal", actor=Actor.of(user))
    assert not Plan.objects.exists()


def broken_session(tmp_path: Path, name: str, user: User) -> AgentSession:
    """A session on a repository whose checked-out base branch a person left dirty."""
    repo = demo_repo_create(tmp_path / name)
    (repo / "greet.py").write_text("# edited on main by a person\n")
    project = project_create(name=name, repo_path=str(repo))
    grant(user, project, "admin")
    session = session_create(project=project, axes={"work_mode": "build", "model_mode": "smart"})
    AgentSession.objects.filter(pk=session.pk).update(driver="inline")
    session.refresh_from_db()
    return session


def heal(session: AgentSession, user: User) -> Unit | None:
    outcome = command_run(session=session, text="/doctor heal", actor=Actor.of(user))
    assert outcome.message.splitlines()[-1].startswith("repair unit queued: plan ")
    session.refresh_from_db()
    assert session.work_mode == "repair"
    return None


def tool_calls(unit: Unit) -> list[tuple[str, str]]:
    events = TraceEvent.objects.filter(unit=unit, kind=TraceKind.TOOL_CALL).order_by("seq")
    return [(e.name, str(e.payload.get("output", ""))[:40]) for e in events]


def test_heal_runs_a_repair_unit_with_the_report_as_brief_and_replays(
    tmp_path: Path, user: User, settings: Any
) -> None:
    recorded = broken_session(tmp_path, "recorded", user)
    heal(recorded, user)
    task = Plan.objects.get(session=recorded).tasks.get()
    assert "projects.repository" in task.description
    assert "uncommitted changes" in task.description
    model = ScriptedModel(*STEPS)

    report = unit_run(
        task_id=task.pk, worker="test", options=UnitOptions(model=MODEL, completion=model)
    )

    assert report is not None
    offered = {tool["function"]["name"] for tool in model.calls[0]["tools"]}
    assert offered == {"read_file", "grep", "glob", "list_dir", "run_command", "finish", "ask_user"}
    assert "projects.repository" in json.dumps(model.calls[0]["messages"])
    unit = Unit.objects.get(pk=report.unit_id)
    calls = tool_calls(unit)
    assert [name for name, _ in calls] == ["read_file", "write_file", "run_command", "finish"]
    assert calls[1][1].startswith("unknown tool 'write_file'")
    worktree = workspace_of(task).path
    assert worktree.is_dir()
    assert not (worktree / "fixed.txt").exists()
    task.refresh_from_db()
    assert task.status == "review", task.status_reason  # verified: its tree is unchanged

    trace = trace_write(
        tmp_path / "heal.jsonl", trace_export(unit_id=unit.pk, header={"task": "heal"})
    )
    replayed = broken_session(tmp_path, "replayed", user)
    AgentSession.objects.filter(pk=replayed.pk).update(replay_trace=str(trace))
    heal(replayed, user)

    assert drain(session_id=replayed.pk, worker="test", step=True, limit=1) == 1

    again = Unit.objects.get(task__plan__session=replayed)
    assert again.model.startswith("replay/")
    assert [name for name, _ in tool_calls(again)] == [name for name, _ in calls]
    replayed.refresh_from_db()
    assert replayed.work_mode == "repair", "a person moves it on after reading the diagnosis"
