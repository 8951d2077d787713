"""``manage.py sf plan import|show|accept|reject`` and ``sf tasks``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agents_app.models import AgentSession
from agents_app.tests.test_cli import run_sf
from tasks_app.models import Plan, Task
from tasks_app.tests.conftest import plan_data, task_data
from tasks_app.tests.test_plan_files import YAML_PLAN

pytestmark = pytest.mark.django_db


def test_import_show_accept_and_the_board(tmp_path: Path, plan_session: AgentSession) -> None:
    path = tmp_path / "plan.yaml"
    path.write_text(YAML_PLAN)
    code, out, _ = run_sf("plan", "import", str(path), "--session", str(plan_session.pk))
    plan = Plan.objects.get()
    assert code == 0
    assert out.splitlines()[:3] == [
        f"plan {plan.pk} (proposed) for session {plan_session.pk}: Add a --verbose flag",
        "  wave 1: flag",
        "  wave 2: docs",
    ]
    assert "      R1 the flag parses" in out

    code, out, _ = run_sf("plan", "show", str(plan.pk), "--output-format", "json")
    shown = json.loads(out)
    assert shown["waves"] == [["flag"], ["docs"]]
    assert shown["tasks"][1]["depends_on"] == [{"task": "flag", "condition": "success"}]
    assert shown["tasks"][0]["acceptance_criteria"] == {
        "R1": "the flag parses",
        "R2": "help mentions it",
    }

    code, out, _ = run_sf(
        "plan", "accept", str(plan.pk), "--autonomous", "--permission-profile", "trusted"
    )
    assert code == 0
    plan_session.refresh_from_db()
    assert plan_session.axes.as_dict()["run_control"] == "autonomous"

    code, out, _ = run_sf("tasks", "--session", str(plan_session.pk), "--output-format", "json")
    board = json.loads(out)
    assert [(t["key"], t["status"], t["schedule"]) for t in board["tasks"]] == [
        ("flag", "todo", "due"),
        ("docs", "todo", "queued"),
    ]
    assert board["tasks"][1]["blockers"] == ["flag to be done (now todo)"]
    assert board["totals"]["counts"] == {"todo": 2}

    code, out, _ = run_sf("tasks", "--session", str(plan_session.pk))
    assert out.splitlines()[0].startswith("flag                 todo         due")
    assert "ready: waiting for a worker" in out.splitlines()[0]


def test_a_bad_plan_prints_every_error_and_writes_nothing(
    tmp_path: Path, plan_session: AgentSession
) -> None:
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan_data(task_data("a", risk_level="extreme"), {"key": "b"})))
    code, out, err = run_sf("plan", "import", str(path), "--session", str(plan_session.pk))
    assert code == 2
    assert out == ""
    lines = err.splitlines()
    assert (
        lines[0]
        == "error: tasks[0] (a).risk_level: Input should be 'low', 'medium', 'high' or 'critical'"
    )
    assert "  tasks[1] (b).title: Field required" in lines
    assert "  tasks[1] (b).acceptance_criteria: Field required" in lines
    assert Plan.objects.count() == 0
    assert Task.objects.count() == 0


def test_json_errors_are_a_list(tmp_path: Path, plan_session: AgentSession) -> None:
    path = tmp_path / "plan.yaml"
    path.write_text("summary: [")
    code, out, _ = run_sf(
        "plan", "import", str(path), "--session", str(plan_session.pk), "--output-format", "json"
    )
    assert code == 2
    assert json.loads(out)["errors"][0].startswith(f"{path}: invalid YAML at line 1")


def test_unknown_ids_exit_2() -> None:
    assert run_sf("plan", "show", "999")[0] == 2
    assert run_sf("plan", "accept", "999")[0] == 2
    assert run_sf("tasks", "--session", "999")[0] == 2
