"""A follow-up sent from the unit page in Chromium reaches the running unit's model at
its next step, and the trace shows it live as the person's (docs/follow-ups.md).

The unit runs in a thread of this process (its own database connection), inline as
headless runs it; its scripted model holds its first answer until a follow-up is stored,
so the message is sent while the unit is running for certain."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from playwright.sync_api import Browser, expect

from agents_app.tests.runtime_helpers import ScriptedModel
from conftest import grant
from tasks_app.engine.replaying import demo_repo_create
from tasks_app.models import FollowUp, Unit, UnitStatus
from tasks_app.tests.test_engine import run_next, start, task_spec, writes
from tests.browser.conftest import logged_in_page
from tests.processes import WebProcess

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]
WORDS = "Also write goodbye on a second line."
WAIT = 90.0  # seconds the model holds its first answer for a follow-up


class HeldModel(ScriptedModel):
    """Answers its first request only once a follow-up is stored (or after ``WAIT``);
    ``asked`` is set when that request arrives."""

    def __init__(self, *steps: Any) -> None:
        super().__init__(*steps)
        self.asked = threading.Event()

    def __call__(self, **kwargs: Any) -> Any:
        if not self.calls:
            self.asked.set()
            deadline = time.monotonic() + WAIT
            while not FollowUp.objects.exists() and time.monotonic() < deadline:
                time.sleep(0.2)
        return super().__call__(**kwargs)


@pytest.fixture
def running_unit(tmp_path: Path, user: User) -> Iterator[dict[str, Any]]:
    """A unit running in a thread, its model waiting inside its first step."""
    session, plan = start(demo_repo_create(tmp_path / "greet"), task_spec())
    grant(user, session.project, "operator")
    model = HeldModel(("look", [("list_dir", {"path": "."})]), *writes("hello\ngoodbye\n"))
    outcome: dict[str, Any] = {"model": model}

    def run() -> None:
        try:
            outcome["report"] = run_next(session, model)
        finally:
            connection.close()

    thread = threading.Thread(target=run, name="unit")
    thread.start()
    # Its brief is sent: what is sent from now on can only reach a later step.
    assert model.asked.wait(timeout=120), "the unit never asked its model"
    outcome["unit_id"] = Unit.objects.get(task__plan=plan, status=UnitStatus.RUNNING).pk
    outcome["thread"] = thread
    yield outcome
    thread.join(timeout=WAIT + 60)


def test_a_followup_from_the_unit_page_reaches_the_running_model(
    running_unit: dict[str, Any], user: User, web: WebProcess, browser: Browser
) -> None:
    unit_id = running_unit["unit_id"]
    page = logged_in_page(browser, web, user, "/")
    page.goto(f"{web.url}/units/{unit_id}/")
    expect(page.locator("#followup-send")).to_have_text("Send to the running agent")

    page.fill("#followup-text", WORDS)
    page.click("#followup-send")

    sent = page.locator("#unit-followups [data-followup-sent]")
    expect(sent).to_have_text("Sent: unit 1 reads it before its next step", timeout=30_000)
    expect(page.locator("#unit-followups li[data-followup]")).to_contain_text(WORDS)
    # The model reads it at its next step; the trace, re-rendered live, shows it as the
    # person's words with who sent it.
    shown = page.locator('#unit-trace li[data-kind="note"] [data-block="followup"]')
    expect(shown).to_contain_text(WORDS, timeout=60_000)
    expect(shown).to_contain_text(
        re.compile(rf"from {user.get_username()}, sent [0-9-]+ [0-9:]+ UTC")
    )
    page.screenshot(path="/tmp/followup-unit-page.png", full_page=True)

    running_unit["thread"].join(timeout=WAIT + 60)
    assert running_unit["report"].task_status == "done"
    # The page, left open, follows: the message was read, and a done task takes none
    # (the box no longer offers the running agent, nor any other).
    expect(page.locator("#unit-followups li[data-followup]")).to_contain_text(
        "read by unit 1", timeout=30_000
    )
    expect(page.locator("#followup-send")).to_have_count(0)
    expect(page.locator("#followup-target")).to_have_attribute("data-offer", "final")
    calls = running_unit["model"].calls
    assert not any(WORDS in str(m.get("content")) for m in calls[0]["messages"])
    assert any(
        f"A message from {user.get_username()} (" in str(m.get("content"))
        and WORDS in str(m.get("content"))
        for m in calls[1]["messages"]
    )
