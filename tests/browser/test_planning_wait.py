"""Planning says what it waits for, live on the session page: a worker (and its place
among the intents waiting), then the model (since when, with how many tokens, counting),
until the plan appears, with no reload.

Two intents are handed to the workers (the plan requests ``planning_start`` writes) and
no worker has taken them: first and second in the planning queue. A worker (a thread of
the test process, as ``tasks_app.plan_request_run`` on a worker) then takes the first;
its planner's model (a fake provider over real HTTP) reads the prompt for several seconds
before it answers with the plan.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Browser, expect

from agents_app.models import AgentSession
from agents_app.runtime.llm import litellm_module
from tasks_app.intake import plan_request_run
from tasks_app.models import PlanRequest
from tasks_app.tests.conftest import lint_clean_plan
from tasks_app.tests.test_engine import MODEL
from tests.browser.conftest import doc_shot, logged_in_page
from tests.browser.test_task_stop import provider  # noqa: F401 - fixture
from tests.browser.test_unit_live import WAIT_MS, in_background, in_thread
from tests.fake_provider import FakeProvider, openai_text
from tests.processes import WebProcess, wait_for

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]
READING = 8.0  # seconds the model reads the planner's prompt before it answers


@pytest.fixture
def two_intents(agent_session: AgentSession) -> list[int]:
    """Two intents of the session sent to the workers, which none has taken yet."""
    AgentSession.objects.filter(pk=agent_session.pk).update(work_mode="plan", model_mode="deep")
    return [
        PlanRequest.objects.create(session=agent_session, intent=intent).pk
        for intent in ("add a --flag option", "document the flag")
    ]


def test_the_session_page_says_what_planning_waits_for(
    agent_session: AgentSession,
    two_intents: list[int],
    provider: FakeProvider,  # noqa: F811
    settings: Any,
    user: User,
    web: WebProcess,
    browser: Browser,
) -> None:
    settings.SF_MODEL_DEEP = MODEL
    page = logged_in_page(browser, web, user, f"/sessions/{agent_session.pk}/")
    first, second = (page.locator(f'#plans-list [data-plan-request="{pk}"]') for pk in two_intents)
    expect(first.locator("[data-queue-position]")).to_have_text(
        "waiting for a worker (position 1 in the planning queue)"
    )
    expect(second.locator("[data-queue-position]")).to_have_text(
        "waiting for a worker (position 2 in the planning queue)"
    )
    doc_shot(page.locator("#session-plans"), "02-planning-worker")

    plan = openai_text(json.dumps(lint_clean_plan()))
    provider.answer(dataclasses.replace(plan, delay=READING), plan)  # a lint retry: the same
    litellm_module()  # imported before planning: it takes seconds on a busy machine
    worker = in_background(lambda: plan_request_run(request_id=two_intents[0]))
    try:
        # A worker took the first: the second moves up, live.
        expect(second.locator("[data-queue-position]")).to_have_text(
            "waiting for a worker (position 1 in the planning queue)", timeout=WAIT_MS
        )
        wait_for(lambda: provider.requests, timeout=60, what="the planner's model request")
        waiting = first.locator("[data-planning-waiting]")
        expect(waiting).to_contain_text("waiting for the model: request sent", timeout=WAIT_MS)
        assert int(waiting.locator("[data-waiting-tokens]").inner_text()) > 100  # the prompt
        seconds = waiting.locator("[data-waiting-seconds]")
        before = int(seconds.inner_text())
        page.wait_for_timeout(2500)
        assert int(seconds.inner_text()) >= before + 2  # counting, live
        page.screenshot(path="/tmp/planning-wait.png", full_page=True)
        doc_shot(page.locator("#session-plans"), "02-planning-model")
        # The answer comes: the request gives way to its plan, ready for review.
        expect(first).to_have_count(0, timeout=WAIT_MS)
        expect(page.locator("#plans-list [data-review-plan]")).to_be_visible(timeout=WAIT_MS)
        expect(second.locator("[data-queue-position]")).to_be_visible()
    finally:
        worker.join(120)
    assert in_thread(lambda: PlanRequest.objects.get(pk=two_intents[0]).status) == "planned"
