"""Approving a blocked call continues the work that waited for it, from the browser.

A unit under ``normal`` writes a file and then asks to push: the gate asks a person,
the unit ends blocked. An approver approves the call on the approvals page; the task's
next attempt goes on from the blocked conversation: it makes the approved call first
(the model is not asked for it again, and nobody is asked twice), then asks the model
with the conversation so far. The new unit's page says where it resumed from, and the
notes SF made on a model step (calls it refused) show on the unit page at that step.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Browser, expect

from agents_app.gate.approvals import decision_review
from agents_app.models import AgentSession, RiskDecision, TraceKind
from agents_app.runtime.trace import TraceRecorder
from agents_app.tests.runtime_helpers import ScriptedModel
from conftest import grant
from tasks_app.engine.replaying import demo_repo_create
from tasks_app.models import Task, Unit
from tasks_app.tests.test_engine import run_next, start, task_spec
from tests.browser.conftest import logged_in_page
from tests.browser.test_unit_live import WAIT_MS, in_thread
from tests.processes import WebProcess

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]
PUSH = ("pushing", [("run_command", {"command": "git push origin main"})])


@pytest.fixture
def blocked(tmp_path: Path, user: User) -> AgentSession:
    """A session whose one task is blocked on an approval of ``git push`` after it wrote
    notes.txt; ``user`` approves."""
    repo = demo_repo_create(tmp_path / "greet")
    session, _ = start(repo, task_spec(verify=["test -f notes.txt"]), profile="normal")
    grant(user, session.project, "approver")
    wrote = ("noting", [("write_file", {"path": "notes.txt", "content": "pushed soon"})])
    report = run_next(session, ScriptedModel(wrote, PUSH))
    assert report.task_status == "blocked", report
    return session


def test_an_approved_call_resumes_the_blocked_work(
    blocked: AgentSession, user: User, web: WebProcess, browser: Browser
) -> None:
    decision = in_thread(lambda: RiskDecision.objects.get(review_status="pending"))
    page = logged_in_page(browser, web, user, "/approvals/")
    row = page.locator(f'tr[data-decision="{decision.pk}"]')
    expect(row).to_contain_text("git push origin main")
    row.locator('button[value="approve"]').click()
    expect(row).to_have_count(0, timeout=WAIT_MS)

    task = in_thread(lambda: Task.objects.get(plan__session=blocked))
    assert task.status == "todo", task.status_reason
    model = ScriptedModel(("done", [("finish", {"summary": "pushed"})]))
    report = in_thread(lambda: run_next(blocked, model))
    assert report.outcome == "verified", report
    # One model call: the approved push was made from the kept conversation, not asked for.
    [asked] = model.calls
    sent = asked["messages"]
    assert any("write_file" in str(message.get("tool_calls")) for message in sent)
    assert "exit code" in [m for m in sent if m["role"] == "tool"][-1]["content"]
    assert in_thread(lambda: RiskDecision.objects.filter(review_status="pending").count()) == 0

    second = in_thread(lambda: Unit.objects.get(task=task, attempt=2).pk)
    page.goto(f"{web.url}/units/{second}/")
    trace = page.locator("#unit-trace")
    # The repository's instructions note comes first; the resumption's follows it.
    resumed = trace.locator('li[data-kind="note"]').filter(has_text="resumed from attempt 1")
    expect(resumed).to_contain_text(
        f"resumed from attempt 1 at the call approved in decision {decision.pk}"
    )
    push = trace.locator('li[data-kind="tool_call"]').first
    expect(push).to_contain_text("git push origin main")
    expect(push.locator(".chip.allow")).to_be_visible()


def test_calls_sf_refused_show_on_the_unit_page_at_their_step(
    blocked: AgentSession, user: User, web: WebProcess, browser: Browser
) -> None:
    unit = in_thread(lambda: Unit.objects.select_related("task__plan__session").get())
    refused = "3 different tool calls in the text; none was run: write one call per answer"

    def record() -> Any:
        recorder = TraceRecorder(session=unit.task.plan.session, unit_id=unit.pk)
        return recorder.record(
            TraceKind.MODEL_STEP,
            name="openai/gpt-4o",
            payload={"content": "I will do three things", "tool_calls": [], "notes": [refused]},
        )

    in_thread(record)
    page = logged_in_page(browser, web, user, f"/units/{unit.pk}/")
    step = page.locator('#unit-trace li[data-kind="model_step"]').last
    expect(step.locator('[data-block="note"]')).to_contain_text(refused)


@pytest.fixture
def asking(tmp_path: Path, user: User) -> AgentSession:
    """A session whose one task will ask to push; ``user`` approves."""
    session, _ = start(demo_repo_create(tmp_path / "greet"), task_spec(), profile="normal")
    grant(user, session.project, "approver")
    return session


def test_the_boards_approvals_follow_an_ask_and_its_rejection_live(
    asking: AgentSession, user: User, web: WebProcess, browser: Browser
) -> None:
    """The board's totals count the calls waiting for a person, as the approvals page
    does: the page left open says "approvals 1" when the unit asks and "approvals 0"
    once the call is rejected, and the task's row says it was rejected."""
    page = logged_in_page(browser, web, user, f"/tasks/?session={asking.pk}")
    totals = page.locator("#board-totals")
    expect(totals).to_contain_text("approvals 0")

    report = in_thread(lambda: run_next(asking, ScriptedModel(PUSH)))
    assert report.task_status == "blocked", report
    expect(totals).to_contain_text("approvals 1", timeout=WAIT_MS)
    approvals = totals.locator('[data-total="approvals"]')
    expect(approvals).to_have_attribute("data-approvals", "1")
    row = page.locator("tr[data-task]")
    expect(row).to_have_attribute("data-status", "blocked")

    decision = in_thread(lambda: RiskDecision.objects.get(review_status="pending"))
    reviewer = in_thread(lambda: User.objects.get(pk=user.pk))
    in_thread(
        lambda: decision_review(
            decision=decision, reviewer=reviewer, approve=False, scope="once", note="not yet"
        )
    )
    expect(totals).to_contain_text("approvals 0", timeout=WAIT_MS)
    expect(row).to_contain_text(f"decision {decision.pk} rejected: not yet")
