"""``sf headless`` deadlines while planning: ``--timeout``, SIGINT and SIGTERM end
planning as they end units — the in-flight model call cut, the session paused and
resumable, the documented exit code — and a run left blocked exits 10 saying why.

The model is the fake HTTP provider answering slowly; the signal test runs headless in
a real subprocess (as ``tests/test_headless_recovery.py``)."""

from __future__ import annotations

import json
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.test import override_settings

from agents_app.models import AgentSession, TraceEvent
from agents_app.runtime.llm import litellm_module
from tasks_app.engine.replaying import demo_repo_create
from tasks_app.features.headless import runner
from tasks_app.features.headless.outcome import settled_outcome
from tasks_app.models import HoldReason, Plan, PlanStatus, Task, TaskStatus
from tasks_app.tests.conftest import lint_clean_plan, make_plan, plan_data, task_data
from tests.cli import run_sf
from tests.fake_provider import FakeProvider, Reply, fake_provider, openai_text  # noqa: F401
from tests.headless_runs import Background
from tests.processes import wait_for

DEEP = "openai/gpt-4o"
SLOW = 300.0  # the model's answer takes minutes: every deadline here is far shorter


@pytest.fixture
def deep(fake_provider: FakeProvider) -> Iterator[FakeProvider]:  # noqa: F811
    endpoint = {"api_base": fake_provider.openai_base, "api_key": "sk-fake"}
    with override_settings(
        SF_MODEL_DEEP=DEEP,
        SF_MODEL_SMART=DEEP,  # the resumed run builds with the smart model
        SF_MODEL_FALLBACK="",
        SF_MODEL_ENDPOINTS={"deep": endpoint},
    ):
        yield fake_provider


def _slow_plan() -> Reply:
    reply = openai_text(json.dumps(lint_clean_plan()))
    reply.delay = SLOW
    return reply


@pytest.mark.django_db
def test_timeout_cuts_planning_and_a_resumed_run_plans_again(
    tmp_path: Path, deep: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = demo_repo_create(tmp_path / "greet")
    monkeypatch.setattr(runner.HeadlessRun, "install_signal_handlers", lambda self: None)
    monkeypatch.setattr(runner, "session_lock", lambda session_id: None)
    deep.answer(_slow_plan())
    litellm_module()  # imported before the clock starts (seconds on a busy machine)
    started = time.monotonic()
    code, out, _err = run_sf(
        "headless", "--project", str(repo), "--intent", "add a flag",
        "--timeout", "5", "--output-format", "json",
    )  # fmt: skip
    assert time.monotonic() - started < SLOW / 2  # not waiting for the model's answer
    result = json.loads(out.strip().splitlines()[-1])
    assert (code, result["exit_code"], result["status"]) == (1, 1, "timeout")
    assert result["reason"].startswith("timed out after 5 s while planning; resume with --session")
    session = AgentSession.objects.get(pk=result["session"])
    assert session.paused
    assert "timed out after 5 s while planning" in session.pause_reason
    assert not Plan.objects.exists()

    deep.answer(openai_text(json.dumps(lint_clean_plan())))
    code, out, err = run_sf("headless", "--session", str(session.pk), "--output-format", "json")
    result = json.loads(out.strip().splitlines()[-1])
    assert (code, result["status"]) == (10, "blocked"), err  # the plan awaits acceptance
    assert Plan.objects.get().status == PlanStatus.PROPOSED
    assert deep.requests[-1].body["messages"][1]["content"].startswith("add a flag")


@pytest.mark.django_db(transaction=True)
@pytest.mark.slow
def test_sigint_cuts_the_planners_model_call_in_a_real_process(
    tmp_path: Path,
    fake_provider: FakeProvider,  # noqa: F811
) -> None:
    repo = demo_repo_create(tmp_path / "greet")
    fake_provider.answer(_slow_plan())
    run = Background(
        "--project", str(repo), "--intent", "add a flag", "--output-format", "stream-json",
        SF_MODEL_DEEP=DEEP, SF_MODEL_FALLBACK="",
        SF_MODEL_DEEP_API_BASE=fake_provider.openai_base, SF_MODEL_DEEP_API_KEY="sk-fake",
    )  # fmt: skip
    run.wait_for_event(lambda e: e.type == "session")
    wait_for(
        lambda: fake_provider.requests or run.process.poll() is not None,
        timeout=180,  # a busy machine takes a while to import Django and litellm
        what="the planner's model call",
    )
    assert fake_provider.requests, run.finish().stderr
    sent = time.monotonic()
    run.process.send_signal(signal.SIGINT)
    done = run.finish(timeout=SLOW / 2)
    assert time.monotonic() - sent < SLOW / 2
    assert done.code == 11, done.stderr
    result = done.result()
    assert (result.status, result.exit_code) == ("cancelled", 11)
    assert result.reason.startswith("cancelled by SIGINT while planning; resume with --session")
    assert "Traceback" not in done.stderr
    session = AgentSession.objects.get(pk=result.session)
    assert session.paused
    note = TraceEvent.objects.filter(session=session, payload__has_key="interrupted").get()
    assert note.payload["intent"] == "add a flag"


@pytest.mark.django_db
def test_a_task_blocked_on_an_approval_no_longer_pending_exits_10_saying_so(
    plan_session: AgentSession,
) -> None:
    plan = make_plan(plan_session, task_data("add-is-even"), task_data("test-is-even"))
    Task.objects.filter(plan=plan).update(
        status=TaskStatus.BLOCKED,
        hold_reason=HoldReason.APPROVAL_NEEDED,
        status_reason="stuck: the same verification failure three times",
    )
    outcome = settled_outcome(plan=plan, session_id=plan_session.pk, step=False, units_run=0)
    assert (outcome.code, outcome.status) == (10, "blocked")
    assert outcome.waiting_for == [
        "unblock add-is-even: stuck: the same verification failure three times",
        "unblock test-is-even: stuck: the same verification failure three times",
    ]


@pytest.mark.django_db
def test_autonomous_does_not_accept_a_model_plan_that_fails_the_lint(
    tmp_path: Path, deep: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = demo_repo_create(tmp_path / "greet")
    monkeypatch.setattr(runner.HeadlessRun, "install_signal_handlers", lambda self: None)
    monkeypatch.setattr(runner, "session_lock", lambda session_id: None)
    vacuous = json.dumps(
        plan_data(task_data("shout", verify=["echo shouted"], intent_claim=["greet.py"]))
    )
    deep.answer(openai_text(vacuous), openai_text(vacuous))
    code, out, err = run_sf(
        "headless", "--project", str(repo), "--intent", "add --shout",
        "--autonomous", "--permission-profile", "trusted", "--output-format", "json",
    )  # fmt: skip
    result = json.loads(out.strip().splitlines()[-1])
    assert (code, result["status"]) == (10, "blocked"), err
    assert "fails the plan lint" in result["reason"]
    assert "shout: `echo shouted`: error: it checks nothing" in result["waiting_for"][1]
    assert "it checks nothing" in deep.requests[1].body["messages"][-1]["content"]
    assert Plan.objects.get().status == PlanStatus.PROPOSED
