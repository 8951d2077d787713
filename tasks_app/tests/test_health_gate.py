"""The pre-dispatch health gate: a failing check holds dispatch and asks for repair per
the project's policy (auto, ask, log-only; never under manual control); repair mode
runs the fixes and, once the checks pass, returns to the axes it came from."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from agents_app.models import AgentSession, ModeTransition, RepairRecord
from agents_app.services import project_create, session_create
from agents_app.services.commands import command_run
from conftest import grant
from sf_core.actors import Actor
from sf_core.doctor import gate_forget
from tasks_app.engine.dispatch import next_units
from tasks_app.engine.replaying import demo_repo_create
from tasks_app.features.headless.outcome import settled_outcome
from tasks_app.models import Plan
from tasks_app.schemas import plan_spec_parse
from tasks_app.services import plan_accept, plan_create

pytestmark = pytest.mark.django_db
TASK = {"key": "hello", "title": "t", "acceptance_criteria": ["a"], "verify": ["true"]}


@pytest.fixture(autouse=True)
def _fresh_gate() -> Any:
    gate_forget()
    yield
    gate_forget()


def autonomous(tmp_path: Path, policy: str, run_control: str = "autonomous") -> AgentSession:
    """``build | autonomous | trusted | smart`` with one due task."""
    repo = demo_repo_create(tmp_path / f"repo-{policy}")
    project = project_create(
        name=f"p-{policy}", repo_path=str(repo), policy={"repair_policy": policy}
    )
    session = session_create(project=project, axes={"work_mode": "plan", "model_mode": "deep"})
    AgentSession.objects.filter(pk=session.pk).update(driver="inline")
    plan = plan_create(
        session=session, spec=plan_spec_parse({"summary": "s", "tasks": [TASK]}), source="api"
    )
    plan_accept(
        plan=plan,
        actor=Actor.system("t"),
        autonomous=run_control == "autonomous",
        permission_profile="trusted",
        start=False,
    )
    session.refresh_from_db()
    return session


def disk_full(settings: Any, full: bool) -> None:
    """A real failing check: the free space under SF_DATA_DIR is below the threshold."""
    settings.SF_DOCTOR_DISK_ERROR_MIB = 10**9 if full else 0
    gate_forget()


def gate_transitions(session: AgentSession) -> list[ModeTransition]:
    return list(session.transitions.filter(actor_label="health-gate").order_by("pk"))


def test_auto_moves_to_repair_then_back_to_the_previous_axes(tmp_path: Path, settings: Any) -> None:
    session = autonomous(tmp_path, "auto")
    due = next_units(session)
    assert due, "healthy: the task is due"
    disk_full(settings, True)

    assert next_units(session) == []

    session.refresh_from_db()
    assert session.axes.as_dict() | {"surface": ""} == {
        "work_mode": "repair",
        "run_control": "autonomous",
        "permission_profile": "normal",
        "model_mode": "smart",
        "surface": "",
    }
    (entry,) = gate_transitions(session)
    assert entry.reason.startswith("repair: pre-dispatch health gate failed: disk.space: only ")
    assert next_units(session) == [], "still failing: repair dispatches nothing"

    disk_full(settings, False)
    assert next_units(session) == due

    session.refresh_from_db()
    assert (session.work_mode, session.permission_profile) == ("build", "trusted")
    back = session.transitions.order_by("-pk").first()
    assert back is not None
    assert back.reason.startswith("repair done (0 repairs; health checks pass)")
    assert back.reason.endswith(f"before transition {entry.pk}")


def test_ask_waits_for_approval_once_and_holds_dispatch(tmp_path: Path, settings: Any) -> None:
    session = autonomous(tmp_path, "ask")
    disk_full(settings, True)

    assert next_units(session) == []
    assert next_units(session) == []

    session.refresh_from_db()
    assert session.work_mode == "build"
    (asked,) = gate_transitions(session)
    assert (asked.status, asked.requires_approval) == ("pending", True)


def test_log_only_records_and_holds(tmp_path: Path, settings: Any) -> None:
    session = autonomous(tmp_path, "log-only")
    disk_full(settings, True)

    assert next_units(session) == []

    session.refresh_from_db()
    assert session.work_mode == "build"
    (logged,) = gate_transitions(session)
    assert logged.status == "cancelled"
    assert logged.reason.startswith("log-only policy: repair: pre-dispatch health gate failed")


def test_never_automatic_under_assisted_control(tmp_path: Path, settings: Any) -> None:
    session = autonomous(tmp_path, "auto", run_control="assisted")
    AgentSession.objects.filter(pk=session.pk).update(run_control="assisted")
    session.refresh_from_db()
    disk_full(settings, True)

    assert next_units(session) == []

    assert gate_transitions(session) == []
    assert Plan.objects.get(session=session).tasks.get().status == "todo"


def test_a_persons_repair_runs_the_fixes_and_returns_when_clean(tmp_path: Path, user: User) -> None:
    session = autonomous(tmp_path, "ask")
    grant(user, session.project, "admin")
    lock = Path(session.project.repo_path, ".git", "index.lock")
    lock.write_text("")
    os.utime(lock, (1_000_000_000, 1_000_000_000))  # left by a git that died long ago
    command_run(session=session, text="/repair", actor=Actor.of(user))
    session.refresh_from_db()
    assert session.work_mode == "repair"

    assert next_units(session), "fixed, clean, back to build: the task is dispatched"

    assert not lock.exists()
    record = RepairRecord.objects.get()
    assert (record.check_id, record.session_id) == ("locks.dead", session.pk)
    session.refresh_from_db()
    assert session.work_mode == "build"
    assert session.transitions.order_by("-pk").first().reason.startswith("repair done (1 repairs")


def test_headless_says_the_health_gate_holds_it(tmp_path: Path, settings: Any) -> None:
    session = autonomous(tmp_path, "log-only")
    disk_full(settings, True)
    assert next_units(session) == []

    outcome = settled_outcome(
        plan=Plan.objects.get(session=session), session_id=session.pk, step=False, units_run=0
    )

    assert (outcome.status, outcome.code) == ("blocked", 10)
    assert outcome.reason.startswith("repair SF's health (disk.space: only ")
    assert outcome.reason.endswith("): sf doctor, sf doctor --fix")
