"""A unit's hard timeout holds while the model is still writing: a slow model's answer
is cut off at it (through the fake provider's real SSE), and the unit ends with the
reason instead of running on until the answer is whole."""

from __future__ import annotations

import dataclasses
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.test import override_settings

from agents_app.models import AgentSession, TraceEvent
from agents_app.runtime.llm import litellm_module
from tasks_app.models import Task, Unit
from tasks_app.tests.test_engine import repo, start, task_spec  # noqa: F401 - fixture
from tasks_app.tests.test_provider_outage import provider, run_unit  # noqa: F401 - fixture
from tests.fake_provider import (
    FakeProvider,
    fake_provider,  # noqa: F401 - fixture
    openai_text,
)

pytestmark = pytest.mark.django_db


@override_settings(SF_UNIT_HARD_TIMEOUT=timedelta(seconds=10))
def test_a_slow_answer_past_the_hard_timeout_ends_the_unit_at_it(
    repo: Path,  # noqa: F811
    provider: FakeProvider,  # noqa: F811
) -> None:
    session, plan = start(repo, task_spec(max_retries=0))
    AgentSession.objects.filter(pk=session.pk).update(driver="workers")
    words = " ".join(f"w{number}" for number in range(900))  # ~90 s at this pace
    provider.answer(dataclasses.replace(openai_text(words), chunk_delay=0.1))
    litellm_module()  # imported before the clock starts: it takes seconds on a busy machine
    started = time.monotonic()
    run_unit(session)
    elapsed = time.monotonic() - started
    unit = Unit.objects.get(task__plan=plan)
    assert unit.finished_at is not None
    # The whole answer takes a minute and a half to arrive; the unit (worktree and all, on a busy
    # machine, where litellm's first request alone takes seconds) ends soon after its 10 s.
    assert elapsed < 40, (elapsed, unit.summary)
    assert (unit.finished_at - unit.started_at).total_seconds() < 25
    kinds = list(TraceEvent.objects.filter(unit_id=unit.pk).values_list("kind", "name"))
    steps = TraceEvent.objects.filter(unit_id=unit.pk, kind="model_step")
    assert len(steps) == 1, (kinds, len(provider.requests))
    step = steps[0]
    shown = str(step.payload.get("content") or "")
    assert shown
    assert words.startswith(shown)
    assert len(shown) < len(words) / 2
    assert "hard timeout" in unit.summary, unit.summary
    task = Task.objects.get(plan=plan)
    assert task.status == "failed", (task.status, task.status_reason)
    assert "hard timeout" in task.status_reason
