"""The intent box, planning on a worker, plan upload and the pre-flight."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.test.utils import override_settings
from django.urls import reverse
from django.utils import timezone
from django.utils.html import escape

from agents_app.models import AgentSession, ModeTransition, Project
from agents_app.services import session_create
from tasks_app import intake, waiting
from tasks_app.intake import plan_request_run
from tasks_app.models import Plan, PlanRequest, PlanStatus
from tasks_app.replays import planning_replay, unit_replay
from tasks_app.tests.conftest import make_plan, task_data
from tasks_app.tests.intent_traces import INTENT, PLAN, UNIT_STEPS, intent_trace
from tests.fixtures import HANDWRITTEN_DEMO_TRACE

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}
NO_MODELS = {"SF_MODEL_FAST": "", "SF_MODEL_SMART": "", "SF_MODEL_DEEP": ""}


@pytest.fixture
def traces(tmp_path: Path, settings: Any) -> Path:
    """SF_REPLAY_TRACES with one trace in it: the planner's answer, then the unit."""
    folder = tmp_path / "traces"
    folder.mkdir()
    intent_trace(folder / "hello.jsonl")
    settings.SF_REPLAY_TRACES = folder
    for name, value in NO_MODELS.items():
        setattr(settings, name, value)
    return folder


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, list[Any]]]:
    """What was sent to the workers (by name), instead of a broker."""
    calls: list[tuple[str, list[Any]]] = []
    monkeypatch.setattr(
        intake.current_app, "send_task", lambda name, args, **_: calls.append((name, args))
    )
    return calls


def post_intent(client: Client, session: AgentSession, **data: str) -> str:
    url = reverse("session-intent", args=[session.pk])
    return client.post(url, data, **HTMX).content.decode()


def test_an_empty_intent_is_refused_inline_and_nothing_is_written(
    logged_in_client: Client, agent_session: AgentSession, traces: Path, sent: list[Any]
) -> None:
    html = post_intent(logged_in_client, agent_session, intent="   ", replay="hello.jsonl")
    assert "say what you want first" in html
    assert 'id="intent-box"' in html
    assert not PlanRequest.objects.exists()
    assert sent == []


@override_settings(**NO_MODELS, SF_REPLAY_TRACES="/nonexistent")
def test_no_model_configured_is_said_before_the_click_and_once_after(
    logged_in_client: Client, agent_session: AgentSession, sent: list[Any]
) -> None:
    before = logged_in_client.get(reverse("session-plans", args=[agent_session.pk])).content
    html = before.decode()
    assert "no model configured for model mode deep: set SF_MODEL_DEEP" in html
    assert html.count("SF_MODEL_DEEP") == 1
    assert 'id="intent-submit" disabled' in html  # nothing to replay either
    project = logged_in_client.get(reverse("project-detail", args=[agent_session.project_id]))
    assert "set SF_MODEL_DEEP" in project.content.decode()

    after = post_intent(logged_in_client, agent_session, intent="add a flag")
    assert after.count("SF_MODEL_DEEP") == 1  # the pre-flight and the refusal are one line
    assert not PlanRequest.objects.exists()
    assert sent == []


def test_the_project_box_starts_a_session_that_plans_on_a_worker(
    logged_in_client: Client,
    project: Project,
    traces: Path,
    sent: list[Any],
    django_capture_on_commit_callbacks: Any,
) -> None:
    page = logged_in_client.get(reverse("project-detail", args=[project.pk])).content.decode()
    assert "What do you want?" in page
    assert '<option value="hello.jsonl"' in page  # the pre-flight offers the replay
    with django_capture_on_commit_callbacks(execute=True):
        response = logged_in_client.post(
            reverse("project-intent", args=[project.pk]),
            {"intent": INTENT, "replay": "hello.jsonl"},
            **HTMX,
        )
    session = AgentSession.objects.get(project=project)
    assert response.headers["HX-Redirect"] == reverse("session-detail", args=[session.pk])
    request = PlanRequest.objects.get(session=session)
    assert (request.status, request.intent) == ("planning", INTENT)
    assert sent == [("tasks_app.plan_request_run", [request.pk])]  # not planned in the request
    assert session.replay_trace == str(traces / "hello.jsonl")
    assert not Plan.objects.exists()

    slot = logged_in_client.get(reverse("session-plans", args=[session.pk])).content.decode()
    assert f'data-plan-request="{request.pk}" data-status="planning"' in slot

    request = plan_request_run(request_id=request.pk)  # what the worker does
    assert request.status == "planned"
    assert request.plan is not None
    assert request.plan.status == PlanStatus.PROPOSED
    assert list(request.plan.tasks.values_list("key", flat=True)) == ["hello"]
    session.refresh_from_db()
    assert session.work_mode == "plan"  # a new session starts there: nothing to switch
    assert not ModeTransition.objects.filter(session=session).exists()
    slot = logged_in_client.get(reverse("session-plans", args=[session.pk])).content.decode()
    assert f'data-review-plan="{request.plan.pk}"' in slot
    assert "data-plan-request" not in slot  # shown as its plan now, once
    assert plan_request_run(request_id=request.pk).plan == request.plan  # a redelivery


def test_a_planning_failure_on_the_worker_fails_the_request_with_its_reason(
    logged_in_client: Client, agent_session: AgentSession, traces: Path, sent: list[Any]
) -> None:
    post_intent(logged_in_client, agent_session, intent=INTENT, replay="hello.jsonl")
    request = PlanRequest.objects.get()
    # The recording vanished before the worker got to it: the model cannot be asked.
    (traces / "hello.jsonl").unlink()
    request = plan_request_run(request_id=request.pk)
    assert request.status == "failed"
    assert request.status_reason.startswith(f"{traces / 'hello.jsonl'}: cannot read")
    assert not Plan.objects.exists()
    slot = logged_in_client.get(reverse("session-plans", args=[agent_session.pk])).content.decode()
    assert slot.count(escape(request.status_reason)) == 1
    assert f'data-plan-request="{request.pk}" data-status="failed"' in slot


@override_settings(SF_MODEL_DEEP="replay/not-recorded")
def test_a_provider_error_on_the_worker_fails_the_request(agent_session: AgentSession) -> None:
    request = PlanRequest.objects.create(session=agent_session, intent="add a flag")
    request = plan_request_run(request_id=request.pk)
    assert request.status == "failed"
    assert "no active recording not-recorded" in request.status_reason


def test_an_invalid_plan_twice_is_a_rejected_plan_shown_with_its_reason(
    logged_in_client: Client, agent_session: AgentSession, traces: Path, sent: list[Any]
) -> None:
    intent_trace(traces / "hello.jsonl", plan_answers=['{"summary": "no tasks"}'] * 2)
    post_intent(logged_in_client, agent_session, intent=INTENT, replay="hello.jsonl")
    request = plan_request_run(request_id=PlanRequest.objects.get().pk)
    assert request.status == "planned"
    assert request.plan is not None
    assert request.plan.status == PlanStatus.REJECTED
    reason = request.plan.status_reason
    assert reason.startswith("the model's plan was invalid twice")
    slot = logged_in_client.get(reverse("session-plans", args=[agent_session.pk])).content.decode()
    assert slot.count("the model&#x27;s plan was invalid twice") == 1


def test_the_trace_stages_split_planning_from_the_units(tmp_path: Path) -> None:
    trace = intent_trace(tmp_path / "t.jsonl")
    planning = planning_replay(trace)
    assert [json.loads(s["content"]) for s in planning.model_steps] == [PLAN]
    units = unit_replay(trace)
    assert [step["content"] for step in units.model_steps] == [c for c, _ in UNIT_STEPS]
    demo = planning_replay(HANDWRITTEN_DEMO_TRACE)
    assert json.loads(demo.model_steps[0]["content"])["tasks"][0]["key"] == "shout-flag"


# --- plan upload ----------------------------------------------------------------------------


def upload(client: Client, session: AgentSession, name: str, content: str) -> str:
    url = reverse("plan-upload", args=[session.pk])
    file = SimpleUploadedFile(name, content.encode())
    return client.post(url, {"plan_file": file}, **HTMX).content.decode()


def test_a_bad_plan_file_is_refused_with_the_cli_message_and_nothing_written(
    logged_in_client: Client, agent_session: AgentSession
) -> None:
    html = upload(logged_in_client, agent_session, "plan.yaml", "summary: x\ntasks: [\n")
    assert "plan.yaml: invalid YAML at line 3, column 1" in html
    assert "data-upload-error" in html
    assert "/tmp" not in html  # named as uploaded, not by where it was read
    html = upload(logged_in_client, agent_session, "plan.txt", "summary: x")
    assert "plan.txt: unknown plan format .txt; use .yaml, .json or .md" in html
    html = upload(logged_in_client, agent_session, "plan.json", json.dumps({"summary": "x"}))
    assert "tasks" in html
    assert "data-upload-error" in html
    missing = logged_in_client.post(reverse("plan-upload", args=[agent_session.pk]), **HTMX)
    assert "choose a plan file" in missing.content.decode()
    assert not Plan.objects.exists()


def test_a_good_plan_file_becomes_a_proposed_plan(
    logged_in_client: Client, agent_session: AgentSession
) -> None:
    markdown = "---\n" + json.dumps(PLAN) + "\n---\nWrite hello.txt, please.\n"
    html = upload(logged_in_client, agent_session, "hello.md", markdown)
    plan = Plan.objects.get()
    assert f"Plan {plan.pk} imported from hello.md" in html
    assert (plan.status, plan.source, plan.intent) == (
        "proposed",
        "file",
        "Write hello.txt, please.",
    )


# --- Run autonomously's pre-flight ------------------------------------------------------------


@override_settings(**NO_MODELS, SF_REPLAY_TRACES="/nonexistent")
def test_run_autonomously_without_a_model_says_so_before_and_refuses_once(
    logged_in_client: Client, plan_session: AgentSession
) -> None:
    plan = make_plan(plan_session, task_data("a"))
    page = logged_in_client.get(reverse("plan-detail", args=[plan.pk])).content.decode()
    assert "Run autonomously: no model configured for model mode smart: set SF_MODEL_SMART" in page
    assert 'id="run-autonomously" disabled' in page
    response = logged_in_client.post(
        reverse("plan-accept", args=[plan.pk]), {"action": "autonomous"}, **HTMX
    )
    assert response.content.decode().count("SF_MODEL_SMART") == 1
    plan.refresh_from_db()
    plan_session.refresh_from_db()
    assert plan.status == "proposed"
    assert (plan_session.work_mode, plan_session.run_control) == ("plan", "manual")


def test_run_autonomously_may_replay_a_trace_instead(
    logged_in_client: Client, plan_session: AgentSession, traces: Path
) -> None:
    plan = make_plan(plan_session, task_data("a"))
    page = logged_in_client.get(reverse("plan-detail", args=[plan.pk])).content.decode()
    assert '<option value="hello.jsonl">' in page
    response = logged_in_client.post(
        reverse("plan-accept", args=[plan.pk]),
        {"action": "autonomous", "replay": "hello.jsonl"},
        **HTMX,
    )
    assert response.headers["HX-Redirect"] == f"/tasks/?session={plan_session.pk}"
    plan_session.refresh_from_db()
    assert plan_session.replay_trace == str(traces / "hello.jsonl")
    assert plan_session.run_control == "autonomous"


def test_replay_the_demo_makes_a_fresh_project_whose_session_plans_from_the_trace(
    logged_in_client: Client,
    settings: Any,
    tmp_path: Path,
    sent: list[Any],
    django_capture_on_commit_callbacks: Any,
) -> None:
    settings.SF_DATA_DIR = tmp_path / "data"
    for name, value in NO_MODELS.items():
        setattr(settings, name, value)
    pages = []
    for _ in range(2):  # each press its own copy: a second demo never meets the first's branch
        with django_capture_on_commit_callbacks(execute=True):
            response = logged_in_client.post(reverse("demo-replay"), **HTMX)
        assert response.status_code == 200
        pages.append(response["HX-Redirect"])
    requests = list(PlanRequest.objects.order_by("pk"))
    assert [reverse("session-detail", args=[r.session_id]) for r in requests] == pages
    assert [name for name, _ in sent] == [intake.PLAN_REQUEST_TASK] * 2
    first = plan_request_run(request_id=requests[0].pk)
    assert first.status == "planned", first.status_reason
    assert first.plan is not None
    assert first.plan.summary == "Say goodbye too"  # the recording's plan
    assert [t.key for t in first.plan.tasks.all()] == ["farewell"]
    projects = Project.objects.order_by("pk")
    assert [p.name for p in projects] == ["demo greeter 1", "demo greeter 2"]
    assert len({p.repo_path for p in projects}) == 2
    for project in projects:
        assert Path(project.repo_path, "greet.py").is_file()
        assert Path(project.repo_path).is_relative_to(tmp_path / "data" / "demo")
    assert "say goodbye" in requests[0].intent


def test_a_replay_proposes_the_profile_it_was_recorded_under(
    logged_in_client: Client, agent_session: AgentSession, tmp_path: Path
) -> None:
    demo = HANDWRITTEN_DEMO_TRACE
    plan = make_plan(agent_session, task_data("shout-flag"))
    page = logged_in_client.get(reverse("plan-detail", args=[plan.pk])).content.decode()
    assert "data-recorded-profile" not in page  # a live model: the session's own profile
    assert '<option value="normal" selected>' in page
    AgentSession.objects.filter(pk=agent_session.pk).update(replay_trace=str(demo))
    page = logged_in_client.get(reverse("plan-detail", args=[plan.pk])).content.decode()
    assert "<strong data-recorded-profile>trusted</strong>" in page
    assert '<option value="trusted" selected>' in page


def test_a_session_in_another_mode_switches_to_plan_first_and_logs_it(
    agent_session: AgentSession, traces: Path, sent: list[Any]
) -> None:
    assert agent_session.work_mode == "chat"
    request = intake.planning_start(
        session=agent_session, intent=INTENT, actor=intake.PLANNER, replay="hello.jsonl"
    )
    assert plan_request_run(request_id=request.pk).status == "planned"
    agent_session.refresh_from_db()
    assert agent_session.work_mode == "plan"
    switch = ModeTransition.objects.get(session=agent_session)
    assert (switch.from_work_mode, switch.to_work_mode) == ("chat", "plan")


def test_run_autonomously_under_unrestricted_needs_the_tick(
    logged_in_client: Client, agent_session: AgentSession, traces: Path
) -> None:
    plan = make_plan(agent_session, task_data("hello"))
    url = reverse("plan-accept", args=[plan.pk])
    data = {"action": "autonomous", "permission_profile": "unrestricted", "replay": "hello.jsonl"}
    html = logged_in_client.post(url, data, **HTMX).content.decode()
    assert escape(intake.UNRESTRICTED_UNCONFIRMED) in html
    plan.refresh_from_db()
    agent_session.refresh_from_db()
    assert (plan.status, agent_session.permission_profile) == ("proposed", "normal")
    response = logged_in_client.post(url, {**data, "confirm_unrestricted": "on"}, **HTMX)
    assert response.status_code == 200
    assert "HX-Redirect" in response
    agent_session.refresh_from_db()
    assert agent_session.permission_profile == "unrestricted"
    assert agent_session.run_control == "autonomous"


def test_backticks_in_a_plan_read_as_code_and_nothing_else_becomes_html(
    logged_in_client: Client, agent_session: AgentSession
) -> None:
    criteria = ["`python3 greet.py --shout Ada` prints HELLO", "<b>not bold</b> `<i>x</i>`"]
    plan = make_plan(agent_session, task_data("shout", acceptance_criteria=criteria))
    page = logged_in_client.get(reverse("plan-detail", args=[plan.pk])).content.decode()
    assert "<code>python3 greet.py --shout Ada</code> prints HELLO" in page
    assert "&lt;b&gt;not bold&lt;/b&gt; <code>&lt;i&gt;x&lt;/i&gt;</code>" in page
    assert "`" not in page.split('class="criteria"')[1].split("</ul>")[0]


def test_the_plans_slot_says_what_planning_waits_for(
    logged_in_client: Client, agent_session: AgentSession, project: Project
) -> None:
    other = session_create(project=project, title="another")
    older = PlanRequest.objects.create(session=other, intent="older, in another session")
    first, _second = (
        PlanRequest.objects.create(session=agent_session, intent=intent)
        for intent in ("add a flag", "document it")
    )
    slot = logged_in_client.get(reverse("session-plans", args=[agent_session.pk])).content.decode()
    assert "waiting for a worker (position 2 in the planning queue)" in slot  # after older's
    assert "waiting for a worker (position 3 in the planning queue)" in slot

    PlanRequest.objects.filter(pk=older.pk).update(started_at=timezone.now())  # a worker took it
    model_calls: list[dict[str, Any]] = []

    def model(**request: Any) -> str:  # the planner's call, as the page sees it meanwhile
        model_calls.append(request)
        return logged_in_client.get(
            reverse("session-plans", args=[agent_session.pk])
        ).content.decode()

    PlanRequest.objects.filter(pk=first.pk).update(started_at=timezone.now())
    seen = waiting.planning_completion(first, model)(
        model="openai/gpt-4o", messages=[{"role": "user", "content": "plan " * 200}]
    )
    assert "waiting for a worker (position 1 in the planning queue)" in seen  # second moved up
    assert "waiting for the model: request sent" in seen
    tokens = re.search(r"data-waiting-tokens>(\d+)<", seen)
    assert tokens is not None
    assert int(tokens.group(1)) >= 200  # litellm's count of the prompt
    first.refresh_from_db()
    assert first.model_request_at is None  # answered: no longer waiting
    slot = logged_in_client.get(reverse("session-plans", args=[agent_session.pk])).content.decode()
    assert "waiting for the model" not in slot
    assert "a worker is planning it" in slot
