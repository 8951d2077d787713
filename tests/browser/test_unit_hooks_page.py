"""A person sees the project's hooks at work on the unit page (docs/hooks.md, "The trace
and the unit page"): each run in the trace where it happened, with its effect, its
command and the reason it blocked; and the model's side (the blocked call's answer).

The unit runs before the browser opens (a scripted model, the real engine, real
bubblewrap: ``tasks_app/tests/test_unit_hooks.py``'s hooks and steps), so the page is
what a person opening it later sees.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Browser, expect

from agents_app.runtime.sandbox import bwrap_problem
from agents_app.tests.runtime_helpers import ScriptedModel
from conftest import grant
from tasks_app.engine.replaying import demo_repo_create
from tasks_app.models import Unit
from tasks_app.tests.test_engine import run_next, start, task_spec
from tasks_app.tests.test_unit_hooks import EXPECTED_RUNS, HOOKS, STEPS, with_hook_scripts
from tests.browser.conftest import logged_in_page
from tests.processes import WebProcess

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        bool(bwrap_problem("/usr/bin/bwrap")), reason="bubblewrap is required (scripts/setup.sh)"
    ),
]


@pytest.fixture
def hooked_unit(tmp_path: Path, user: User) -> int:
    """A unit whose hooks noted, blocked a write and a finish, and ran before verification."""
    repo = demo_repo_create(tmp_path / "greet")
    with_hook_scripts(repo)
    session, _ = start(repo, task_spec(), policy={"hooks": HOOKS})
    grant(user, session.project, "viewer")
    assert run_next(session, ScriptedModel(*STEPS)).task_status == "done"
    return Unit.objects.get(task__plan__session=session).pk


def test_the_unit_page_shows_each_hook_run_with_its_effect(
    hooked_unit: int, user: User, web: WebProcess, browser: Browser
) -> None:
    page = logged_in_page(browser, web, user, f"/units/{hooked_unit}/")
    runs = page.locator('#unit-trace li[data-kind="hook"]')
    expect(runs).to_have_count(len(EXPECTED_RUNS))
    for index, (name, effect) in enumerate(EXPECTED_RUNS):
        run = runs.nth(index)
        expect(run).to_be_visible()
        expect(run.locator("strong").first).to_have_text(name)
        expect(run.locator("[data-block=hook]")).to_have_attribute("data-effect", effect)
    guard = runs.nth(1)  # the pre_tool hook that blocked the write of locked.txt
    expect(guard).to_contain_text("python3 hooks/guard.py")
    expect(guard).to_contain_text("locked.txt is protected: write hello.txt instead")
    # The model's side: the blocked call's answer, right after the run that blocked it.
    blocked_call = guard.locator('xpath=following-sibling::li[@data-kind="tool_call"][1]')
    expect(blocked_call).to_contain_text("not run: the project's hook guard blocked it")
    expect(runs.nth(4)).to_contain_text("say in the summary which file says hello")
    expect(page.locator("#unit-verification")).to_contain_text("PRE-VERIFY-MARKER")
