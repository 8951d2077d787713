"""A provider outage re-queues the task and pauses the session until the sweep tries
again; it never fails the task nor spends one of its retries (fake HTTP provider)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from django.test import override_settings
from django.utils import timezone

from agents_app.models import AgentSession
from agents_app.runtime import llm
from tasks_app.engine.outage import provider_backoff, provider_outage, provider_resume_due
from tasks_app.engine.sweep import engine_sweep
from tasks_app.engine.unit import UnitOptions, unit_run
from tasks_app.models import ScheduleStatus, Task, TaskSchedule, Unit
from tasks_app.tests.test_engine import MODEL, repo, start, task_spec  # noqa: F401 - fixture
from tests.fake_provider import (
    FakeProvider,
    call,
    error,
    fake_provider,  # noqa: F401 - fixture
    openai_calls,
    server_error,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def provider(
    fake_provider: FakeProvider,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[FakeProvider]:
    """Every mode's model is served by the fake provider; no fallback; no backoff waits
    (the router gives up at the first 5xx)."""
    monkeypatch.setattr(llm, "MAX_SERVER_RETRIES", 0)
    endpoint = {"api_base": fake_provider.openai_base, "api_key": "sk-fake"}
    endpoints = {mode: endpoint for mode in ("fast", "smart", "deep")}
    with override_settings(SF_MODEL_FALLBACK="", SF_MODEL_ENDPOINTS=endpoints):
        yield fake_provider


def run_unit(session: AgentSession) -> None:
    task_id = TaskSchedule.objects.get(task__plan__session=session).task_id
    unit_run(task_id=task_id, worker="test", options=UnitOptions(model=MODEL))


def test_an_outage_requeues_the_task_and_pauses_the_session_until_the_sweep_retries(
    repo: Path,  # noqa: F811
    provider: FakeProvider,
) -> None:
    session, plan = start(repo, task_spec(max_retries=1))
    AgentSession.objects.filter(pk=session.pk).update(driver="workers")
    provider.answer(
        openai_calls(call("write_file", {"path": "hello.txt", "content": "hello"})),
        server_error(503),
    )
    before = timezone.now()
    run_unit(session)
    after = timezone.now()
    task = Task.objects.get(plan=plan)
    unit = Unit.objects.get(task=task)
    assert (task.status, task.retry_count) == ("retrying", 0)  # no retry spent
    assert "provider unavailable" in task.status_reason
    assert unit.status == "cancelled"
    assert unit.summary.startswith("provider unavailable: openai/gpt-4o: ")
    assert unit.cost > 0  # the step before the outage is charged
    session.refresh_from_db()
    assert session.cost_spent > 0
    assert (session.paused, session.pause_cause) == (True, "provider")
    assert session.provider_outages == 1
    assert session.provider_retry_at is not None
    wait = timedelta(seconds=30)  # the first outage in a row
    assert before + wait <= session.provider_retry_at <= after + wait
    schedule = TaskSchedule.objects.get(task=task)
    assert schedule.status == ScheduleStatus.DUE
    # Not due yet: the sweep leaves the session paused and sends nothing.
    assert engine_sweep()["dispatched"] == 0
    session.refresh_from_db()
    assert session.paused
    # Due: the sweep lifts the pause and sends the task to the workers again.
    AgentSession.objects.filter(pk=session.pk).update(
        provider_retry_at=timezone.now() - timedelta(seconds=1)
    )
    assert engine_sweep()["dispatched"] == 1
    session.refresh_from_db()
    assert (session.paused, session.pause_cause, session.provider_retry_at) == (False, "", None)
    assert TaskSchedule.objects.get(task=task).enqueued_at is not None


def test_outages_in_a_row_back_off_longer_up_to_ten_minutes(
    repo: Path,  # noqa: F811
    provider: FakeProvider,
) -> None:
    assert [provider_backoff(n).total_seconds() for n in range(1, 8)] == [
        30,
        60,
        120,
        240,
        480,
        600,
        600,
    ]
    session, plan = start(repo, task_spec())
    provider.answer(server_error(502))
    run_unit(session)
    first = AgentSession.objects.get(pk=session.pk)
    task = Task.objects.get(plan=plan)
    # Another unit of the same wave meets the same outage: one pause, no longer.
    provider_outage(task=task, unit=Unit.objects.get(task=task), reason="the same outage")
    again = AgentSession.objects.get(pk=session.pk)
    assert (again.provider_outages, again.provider_retry_at) == (1, first.provider_retry_at)
    AgentSession.objects.filter(pk=session.pk).update(
        provider_retry_at=timezone.now() - timedelta(seconds=1)
    )
    assert provider_resume_due() == [session.pk]
    provider.answer(server_error(502))
    before = timezone.now()
    run_unit(session)
    after = timezone.now()
    session.refresh_from_db()
    assert session.provider_outages == 2
    assert session.provider_retry_at is not None
    wait = timedelta(seconds=60)  # the second in a row
    assert before + wait <= session.provider_retry_at <= after + wait
    assert Task.objects.get(plan=plan).retry_count == 0


def test_a_bad_request_still_fails_the_task(
    repo: Path,  # noqa: F811
    provider: FakeProvider,
) -> None:
    session, plan = start(repo, task_spec())
    provider.answer(error(400, "Invalid value for 'temperature'"))
    run_unit(session)
    assert Task.objects.get(plan=plan).status == "failed"
    session.refresh_from_db()
    assert (session.paused, session.provider_retry_at) == (False, None)
