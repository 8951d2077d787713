"""Plans sized to the intent and linted before anyone accepts them: the planner sees the
repository, the model's plan is shaped by SF's rules (policy fields, one task for a
function and its test, inferred dependencies, readable keys), and a plan whose verify
commands fail the lint goes back to the planner once with the reasons."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import override_settings

from agents_app.models import AgentSession
from agents_app.runtime.repo_map import repo_map
from tasks_app.models import Plan, PlanStatus
from tasks_app.plan_lint import lint_errors, plan_lint
from tasks_app.plan_shape import plan_shaped
from tasks_app.planning import LintSetting, plan_from_intent
from tasks_app.schemas import plan_spec_parse
from tasks_app.tests.conftest import lint_clean_plan, plan_data, task_data
from tasks_app.tests.test_planning import DEEP, ScriptedModel

pytestmark = pytest.mark.django_db

IS_EVEN = task_data(
    "addmathutilsiseven",
    title="Add is_even to mathutils",
    acceptance_criteria=["is_even(n) returns True for even n"],
    verify=["test -f mathutils.py"],
    intent_claim=["mathutils.py"],
    max_retries=0,
)
IS_EVEN_TEST = task_data(
    "test-is-even",
    title="Tests for is_even",
    task_kind="test",
    acceptance_criteria=["tests/test_mathutils.py tests is_even"],
    verify=["python3 -m pytest -q tests/test_mathutils.py"],
    intent_claim=["tests/test_mathutils.py"],
)


def test_the_repository_map_lists_files_and_top_level_python_symbols(tmp_path: Path) -> None:
    (tmp_path / "mathutils.py").write_text(
        "def add(a, b=1, *rest, **kw):\n    return a\n\n"
        "class Box:\n    def __init__(self):\n        pass\n    def size(self):\n        pass\n"
    )
    (tmp_path / "broken.py").write_text("def (:\n")
    (tmp_path / "README.md").write_text("hi\n")
    text = repo_map(tmp_path)
    assert "mathutils.py: def add(a, b, *rest, **kw); class Box(__init__, size)" in text
    assert "broken.py" in text.splitlines()  # listed, without symbols
    assert "README.md" in text.splitlines()
    for index in range(200):
        (tmp_path / f"m{index:03}.py").write_text(f"def f{index}(): pass\n")
    small = repo_map(tmp_path, budget=300)
    assert len(small) <= 300 + 40
    assert small.splitlines()[-1].startswith("… and ")
    assert "more files" in small


def test_policy_fields_are_dropped_keys_made_readable_and_a_test_task_merged() -> None:
    spec, notes = plan_shaped(plan_data(dict(IS_EVEN), dict(IS_EVEN_TEST)), "add is_even")
    assert [task.key for task in spec.tasks] == ["add-is-even-to-mathutils"]
    task = spec.tasks[0]
    assert task.max_retries == 3  # policy's, not the model's 0
    assert task.verify == ["test -f mathutils.py", "python3 -m pytest -q tests/test_mathutils.py"]
    assert task.intent_claim == ["mathutils.py", "tests/test_mathutils.py"]
    assert any("max_retries set by policy" in note for note in notes)
    assert any("test-is-even merged into add-is-even-to-mathutils" in note for note in notes)


def test_a_task_that_names_another_tasks_files_depends_on_it() -> None:
    flag = task_data("shout-flag", verify=["grep -q shout hello.py"], intent_claim=["hello.py"])
    docs = task_data(
        "document-shout",
        title="Document --shout in the README",
        acceptance_criteria=["README.md describes hello.py --shout"],
        verify=["grep -q -- --shout README.md"],
        intent_claim=["README.md"],
    )
    spec, notes = plan_shaped(plan_data(docs, flag), "add --shout")
    by_key = {task.key: task for task in spec.tasks}
    assert [d.task for d in by_key["document-shout"].depends_on] == ["shout-flag"]
    assert by_key["shout-flag"].depends_on == []
    assert "document-shout depends on shout-flag: it names its files" in notes


def _lint(*tasks: dict[str, Any], root: Path, unattended: bool = True) -> list[dict[str, str]]:
    return plan_lint(
        plan_spec_parse(plan_data(*tasks)), root=root, profile="trusted", unattended=unattended
    )


def _task(verify: str) -> dict[str, Any]:
    return task_data(
        "is-even",
        title="Add is_even",
        acceptance_criteria=["is_even(2) is True"],
        verify=[verify],
        intent_claim=["mathutils.py"],
    )


@pytest.mark.parametrize(
    ("command", "message"),
    [
        ("pytest run `test_mathutils.py`", "test_mathutils.py: no such program"),
        ("python3 -c 'import mathutils'", "would ask a person under trusted"),
        ("echo 'is_even replaced.'", "it checks nothing"),
        ("sed -i s/odd/even/ mathutils.py", "changes files"),
        ("python3 -m pytest -q mathutils.py > mathutils.log", "a redirect"),
        ("grep -q hello hello.txt", "names no file the task changes"),
        ("nosuchprogram-sf mathutils.py", "nosuchprogram-sf: no such program"),
        ("if [ -f mathutils.py; then", "shell parser cannot read it"),
    ],
)
def test_the_lint_finds_what_would_never_verify_the_task(
    tmp_path: Path, command: str, message: str
) -> None:
    errors = lint_errors(_lint(_task(command), root=tmp_path))
    assert errors, command
    assert any(message in error["message"] for error in errors), errors
    assert errors[0]["task"] == "is-even"
    assert errors[0]["command"] == command


@pytest.mark.parametrize(
    "command",
    [
        "python3 -m pytest -q tests/test_mathutils.py",
        "grep -q 'def is_even' mathutils.py",
        "python3 -m pytest -q",  # the whole suite
    ],
)
def test_real_checks_of_the_task_pass_the_lint(tmp_path: Path, command: str) -> None:
    assert _lint(_task(command), root=tmp_path) == []


def test_an_ask_is_a_warning_when_a_person_accepts_the_plan(tmp_path: Path) -> None:
    findings = _lint(_task("python3 -c 'import mathutils'"), root=tmp_path, unattended=False)
    assert [f["level"] for f in findings] == ["warning"]


BROKEN = plan_data(
    task_data("flag", verify=["echo done"], intent_claim=["flag.py"]),
)


@override_settings(SF_MODEL_DEEP=DEEP)
def test_a_plan_that_fails_the_lint_goes_back_once_with_the_reasons(
    plan_session: AgentSession,
) -> None:
    (Path(plan_session.project.repo_path) / "mathutils.py").write_text("def add(a, b): ...\n")
    model = ScriptedModel(json.dumps(BROKEN), json.dumps(lint_clean_plan()))
    plan = plan_from_intent(
        session=plan_session,
        intent="add a flag",
        completion=model,
        lint=LintSetting(profile="trusted", unattended=True),
    )
    assert "mathutils.py: def add(a, b)" in model.calls[0]["messages"][0]["content"]
    schema = model.calls[0]["response_format"]["json_schema"]["schema"]
    assert "max_retries" not in json.dumps(schema)
    retry = model.calls[1]["messages"][-1]["content"]
    assert "flag: `echo done`: error: it checks nothing" in retry
    assert plan.status == PlanStatus.PROPOSED
    assert [t.key for t in plan.tasks.all()] == ["flag", "docs"]
    assert Plan.objects.get(pk=plan.pk).lint == []


@override_settings(SF_MODEL_DEEP=DEEP)
def test_a_plan_failing_the_lint_twice_is_proposed_with_its_findings(
    plan_session: AgentSession,
) -> None:
    model = ScriptedModel(json.dumps(BROKEN), json.dumps(BROKEN))
    plan = plan_from_intent(session=plan_session, intent="add a flag", completion=model)
    assert len(model.calls) == 2
    stored = Plan.objects.get(pk=plan.pk)
    assert stored.status == PlanStatus.PROPOSED
    assert [(f["task"], f["level"]) for f in stored.lint] == [("flag", "error")]


@override_settings(SF_MODEL_DEEP=DEEP)
def test_a_persons_rejection_reason_is_given_to_the_planner(
    plan_session: AgentSession, user: User
) -> None:
    Plan.objects.create(
        session=plan_session,
        intent="add a flag",
        status=PlanStatus.REJECTED,
        status_reason="use the existing cli.py, not a new module",
        rejected_by=user,
    )
    model = ScriptedModel(json.dumps(lint_clean_plan()))
    plan_from_intent(session=plan_session, intent="add a flag", completion=model)
    assert "use the existing cli.py, not a new module" in model.calls[0]["messages"][1]["content"]
