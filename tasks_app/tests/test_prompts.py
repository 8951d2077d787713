"""What the next unit is told about the attempt before it."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents_app.tests.runtime_helpers import ScriptedModel
from sf_core.actors import Actor
from tasks_app.engine.prompts import task_brief
from tasks_app.engine.replaying import demo_repo_create
from tasks_app.engine.review import task_request_changes
from tasks_app.models import Unit
from tasks_app.tests.test_engine import run_next, start, task_spec, writes

pytestmark = pytest.mark.django_db


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return demo_repo_create(tmp_path / "greet")


def test_the_next_unit_hears_the_reviewers_comment(repo: Path) -> None:
    session, plan = start(repo, task_spec(), profile="normal")
    assert run_next(session, ScriptedModel(*writes("hello"))).task_status == "review"
    task = plan.tasks.get()
    task_request_changes(task=task, actor=Actor.system("ada"), reason="say it louder\nand twice")

    model = ScriptedModel(*writes("HELLO hello"))
    assert run_next(session, model).task_status == "review"
    brief = model.calls[0]["messages"][1]["content"]
    assert "## Attempt 1 passed verification; the reviewer asked for changes" in brief
    assert "A person (ada) reviewed attempt 1's changes" in brief
    assert "> changes requested by ada: say it louder\n> and twice" in brief
    assert "did not pass" not in brief


def test_a_failed_attempt_is_still_briefed_with_its_output(repo: Path) -> None:
    session, plan = start(repo, task_spec(), profile="normal")
    run_next(session, ScriptedModel(*writes("nope")))  # verify greps for hello: fails
    first = Unit.objects.get(task__plan=plan, attempt=1)
    brief = task_brief(plan.tasks.get(), "", first)
    assert f"## Attempt 1 did not pass ({first.status})" in brief
    assert "reviewer" not in brief


def test_changes_requested_before_an_attempt_do_not_brief_the_one_after(repo: Path) -> None:
    """A review belongs to the attempt it reviewed, not to later ones."""
    session, plan = start(repo, task_spec(), profile="normal")
    run_next(session, ScriptedModel(*writes("hello")))
    task = plan.tasks.get()
    task_request_changes(task=task, actor=Actor.system("ada"), reason="louder")
    run_next(session, ScriptedModel(*writes("nope")))  # attempt 2 fails verification
    second = Unit.objects.get(task__plan=plan, attempt=2)
    brief = task_brief(plan.tasks.get(), "", second)
    assert "## Attempt 2 did not pass" in brief
    assert "louder" not in brief
