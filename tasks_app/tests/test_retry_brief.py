"""Failures that teach the next try, and limits a model's plan cannot set."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest
from django.test import override_settings

from agents_app.models import AgentSession, TraceEvent, TraceKind
from agents_app.tests.runtime_helpers import ScriptedModel
from tasks_app.engine.prompts import task_brief
from tasks_app.engine.replaying import demo_repo_create
from tasks_app.models import PlanSource, Unit
from tasks_app.planning import plan_from_intent
from tasks_app.schemas import plan_spec_parse
from tasks_app.services import plan_create
from tasks_app.tests.conftest import plan_data, task_data
from tasks_app.tests.test_engine import run_next, start, task_spec, writes
from tasks_app.tests.test_planning import DEEP
from tasks_app.tests.test_planning import ScriptedModel as ScriptedPlanner

pytestmark = pytest.mark.django_db


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return demo_repo_create(tmp_path / "greet")


def test_a_retry_is_briefed_with_the_output_the_diff_and_what_was_refused(repo: Path) -> None:
    session, plan = start(repo, task_spec(), profile="normal")
    run_next(session, ScriptedModel(*writes("nope")))  # verify greps for hello: fails
    first = Unit.objects.get(task__plan=plan, attempt=1)
    TraceEvent.objects.create(
        session=session,
        unit=first,
        seq=999,
        kind=TraceKind.TOOL_CALL,
        name="run_command",
        payload={
            "arguments": {"command": "sed -i s/nope/hello/ hello.txt"},
            "output": "denied by shell.sed_inplace: edits files outside the tools",
            "decision": {"decision": "deny", "rule": "shell.sed_inplace"},
        },
    )
    brief = task_brief(plan.tasks.get(), "", first)
    assert "[exit 1" in brief  # the verification output
    assert "Its changes (git diff):\n```diff\n" in brief
    assert "+nope" in brief
    assert "Refused by the permission gate" in brief
    assert "- run_command(command='sed -i s/nope/hello/ hello.txt') → denied by shell" in brief


def test_no_progress_spends_a_retry_and_the_retry_hears_why(repo: Path) -> None:
    session, _ = start(repo, task_spec(), profile="normal")
    prose = ("I will write hello.txt now.", [])
    report = run_next(session, ScriptedModel(prose, prose, prose))
    assert report.outcome == "no_progress"
    assert report.task_status == "retrying"
    model = ScriptedModel(*writes("hello"))
    assert run_next(session, model).task_status == "review"  # verification passed
    brief = model.calls[0]["messages"][1]["content"]
    assert "It ended: no_progress: 3 answers in a row without a tool call" in brief
    assert "It changed no file." in brief


# Lint-clean (the plan lint would send any other plan back to the planner once).
LIMITED = task_data(
    "flag",
    max_retries=0,
    cost_budget="0.01",
    verify=["test -f flag.py"],
    intent_claim=["flag.py"],
)


@override_settings(SF_MODEL_DEEP=DEEP)
def test_a_models_plan_cannot_remove_retries_or_set_budgets(plan_session: AgentSession) -> None:
    answer = json.dumps(plan_data(LIMITED))
    plan = plan_from_intent(
        session=plan_session, intent="add a flag", completion=ScriptedPlanner(answer)
    )
    task = plan.tasks.get()
    assert task.max_retries == 3
    assert task.cost_budget is None


def test_a_persons_plan_keeps_its_limits(plan_session: AgentSession) -> None:
    spec = plan_spec_parse(plan_data(LIMITED))
    task = plan_create(session=plan_session, spec=spec, source=PlanSource.API).tasks.get()
    assert task.max_retries == 0
    assert task.cost_budget == Decimal("0.01")
