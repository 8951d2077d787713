"""Plan documents: YAML, JSON, Markdown; every error printed with its location."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sf_core.errors import PlanInvalid
from tasks_app.plan_files import plan_file_read
from tasks_app.tests.conftest import plan_data, task_data

YAML_PLAN = """\
summary: Add a --verbose flag
intent: make the CLI chatty
tasks:
  - key: flag
    title: Parse --verbose
    acceptance_criteria: [the flag parses, help mentions it]
    verify: [pytest -q tests/test_cli.py]
    intent_claim: [cli.py]
  - key: docs
    title: Document it
    acceptance_criteria: [README has a section]
    verify: [grep -q verbose README.md]
    depends_on: [flag]
    task_kind: docs
    risk_level: low
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_yaml(tmp_path: Path) -> None:
    spec = plan_file_read(write(tmp_path, "plan.yaml", YAML_PLAN))
    assert [task.key for task in spec.tasks] == ["flag", "docs"]
    assert spec.tasks[1].depends_on[0].task == "flag"
    assert spec.tasks[1].depends_on[0].condition == "success"
    assert spec.tasks[0].max_retries == 3


def test_json(tmp_path: Path) -> None:
    data = plan_data(
        task_data("a"), task_data("b", depends_on=[{"task": "a", "condition": "always"}])
    )
    spec = plan_file_read(write(tmp_path, "plan.json", json.dumps(data)))
    assert spec.tasks[1].depends_on[0].condition == "always"


def test_markdown_frontmatter_with_the_body_as_intent(tmp_path: Path) -> None:
    body = YAML_PLAN.replace("intent: make the CLI chatty\n", "")
    spec = plan_file_read(
        write(tmp_path, "plan.md", f"---\n{body}---\n# Why\nUsers want to see progress.\n")
    )
    assert spec.intent == "# Why\nUsers want to see progress."
    assert len(spec.tasks) == 2


def test_every_field_error_is_listed_with_its_location(tmp_path: Path) -> None:
    data = plan_data(
        task_data("ok"),
        {
            "key": "Bad Key",
            "title": "",
            "acceptance_criteria": [],
            "risk_level": "huge",
            "colour": "red",
        },
        task_data("late", max_retries=99, cost_budget=-1),
    )
    with pytest.raises(PlanInvalid) as caught:
        plan_file_read(write(tmp_path, "plan.json", json.dumps(data)))
    lines = str(caught.value).splitlines()
    assert (
        "tasks[1] (Bad Key).key: String should match pattern '^[a-z0-9][a-z0-9-]{0,62}$'" in lines
    )
    assert "tasks[1] (Bad Key).title: String should have at least 1 character" in lines
    assert (
        "tasks[1] (Bad Key).acceptance_criteria: List should have at least 1 item after validation, not 0"
        in lines
    )
    assert (
        "tasks[1] (Bad Key).risk_level: Input should be 'low', 'medium', 'high' or 'critical'"
        in lines
    )
    assert "tasks[1] (Bad Key).colour: Extra inputs are not permitted" in lines
    assert "tasks[2] (late).max_retries: Input should be less than or equal to 10" in lines
    assert "tasks[2] (late).cost_budget: Input should be greater than or equal to 0" in lines
    assert len(lines) == 7


@pytest.mark.parametrize(
    ("tasks", "message"),
    [
        (
            [task_data("a", depends_on=["b"]), task_data("b", depends_on=["a"])],
            "(plan): dependency cycle: a → b → a",
        ),
        ([task_data("a", depends_on=["zz"])], "(plan): task a depends on unknown task zz"),
        ([task_data("a"), task_data("a")], "(plan): task keys must be unique; repeated: a"),
        ([task_data("a", depends_on=["a"])], "(plan): task a depends on itself"),
        ([], "tasks: List should have at least 1 item after validation, not 0"),
    ],
)
def test_graph_errors_reject_the_whole_plan(tmp_path: Path, tasks: list, message: str) -> None:  # type: ignore[type-arg]
    with pytest.raises(PlanInvalid) as caught:
        plan_file_read(write(tmp_path, "p.json", json.dumps(plan_data(*tasks))))
    assert str(caught.value) == message


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("p.yaml", "summary: [unclosed", "invalid YAML at line 1, column 19: expected ',' or ']'"),
        ("p.json", '{"summary": ', "invalid JSON at line 1, column 13"),
        ("p.md", "summary: x", "a Markdown plan starts with a --- frontmatter block"),
        ("p.md", "---\nsummary: x\n", "the frontmatter block is not closed with ---"),
        ("p.toml", "x = 1", "unknown plan format .toml; use .yaml, .json or .md"),
        ("p.yaml", "- just\n- a list\n", "a plan is a mapping with summary and tasks, got list"),
    ],
)
def test_unreadable_documents_name_the_problem(
    tmp_path: Path, name: str, text: str, message: str
) -> None:
    path = write(tmp_path, name, text)
    with pytest.raises(PlanInvalid) as caught:
        plan_file_read(path)
    assert str(caught.value).startswith(f"{path}: {message}")


def test_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(PlanInvalid, match="no such file"):
        plan_file_read(tmp_path / "nope.yaml")
