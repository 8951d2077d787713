"""Follow-ups (docs/follow-ups.md): a person's message reaches a running unit's next
model step, or the next attempt's brief of a task whose last attempt ended."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from agents_app.models import TraceEvent
from agents_app.services import project_create
from agents_app.tests.runtime_helpers import ScriptedModel
from conftest import grant
from sf_core.actors import Actor
from sf_core.errors import InvalidTransition, NotAllowed
from tasks_app.engine.replaying import demo_repo_create
from tasks_app.features.followups.services import FollowUpInvalid, followup_offer, followup_send
from tasks_app.models import MAX_FOLLOWUP_CHARS, FollowUp, Task, Unit
from tasks_app.tests.test_bad_input import run_sf
from tasks_app.tests.test_engine import repo, run_next, start, task_spec, writes  # noqa: F401

pytestmark = pytest.mark.django_db
WORDS = "Also add a second line that says goodbye."


@pytest.fixture
def alice() -> User:
    return User.objects.create_user("alice", password="pw")


class SendingModel(ScriptedModel):
    """A scripted model; while answering its first request, a person sends a follow-up
    to the unit that is running (the loop is inside that model step)."""

    def __init__(self, send: Callable[[], Any], *steps: Any) -> None:
        super().__init__(*steps)
        self.send = send

    def __call__(self, **kwargs: Any) -> Any:
        if not self.calls:
            self.send()
        return super().__call__(**kwargs)


def user_texts(call: dict[str, Any]) -> str:
    return "\n".join(str(m.get("content") or "") for m in call["messages"] if m["role"] != "system")


def test_a_followup_to_a_running_unit_reaches_its_next_model_step(
    repo: Path,  # noqa: F811
    alice: User,
) -> None:
    session, plan = start(repo, task_spec())
    grant(alice, session.project, "operator")
    task = plan.tasks.get()
    sent: list[Any] = []

    def send() -> None:
        unit = Unit.objects.get(task=task)
        sent.append(followup_send(text=WORDS, actor=Actor.of(alice), unit=unit))

    model = SendingModel(send, *writes("hello\ngoodbye\n"))
    report = run_next(session, model)
    assert report.task_status == "done"
    assert sent[0].delivery == "unit 1 reads it before its next step"
    assert WORDS not in user_texts(model.calls[0])
    assert "A message from alice (" in user_texts(model.calls[1])
    assert WORDS in user_texts(model.calls[1])
    followup = FollowUp.objects.get()
    unit = Unit.objects.get(task=task)
    assert (followup.delivered_unit_id, followup.author, followup.unit_id) == (
        unit.pk,
        alice,
        unit.pk,
    )
    assert followup.delivered_at is not None
    traced = TraceEvent.objects.get(unit_id=unit.pk, kind="note", name="followup")
    assert traced.payload["author"] == "alice"
    assert traced.payload["text"] == WORDS
    assert traced.payload["sent_at"] == followup.created_at.isoformat()
    # Right after the first tool call, before the next model step: where it happened.
    steps = list(
        TraceEvent.objects.filter(unit_id=unit.pk).order_by("seq").values_list("kind", "name")
    )
    first_call = next(i for i, (kind, _) in enumerate(steps) if kind == "tool_call")
    assert steps.index(("note", "followup")) == first_call + 1


def test_a_unit_that_has_ended_refuses_a_followup_naming_what_to_do(
    repo: Path,  # noqa: F811
    alice: User,
) -> None:
    session, _ = start(repo, task_spec())
    grant(alice, session.project, "operator")
    run_next(session, ScriptedModel(*writes("hello\n")))
    unit = Unit.objects.get()
    with pytest.raises(
        InvalidTransition,
        match=r"unit \d+ \(attempt 1 of task hello\) has already ended \(succeeded\); send the follow-up to task hello",
    ):
        followup_send(text=WORDS, actor=Actor.of(alice), unit=unit)
    with pytest.raises(InvalidTransition, match="task hello is done, which is final"):
        followup_send(text=WORDS, actor=Actor.of(alice), task=unit.task)
    assert not FollowUp.objects.exists()


def test_a_followup_on_a_failed_task_starts_its_next_attempt_with_it_in_the_brief(
    repo: Path,  # noqa: F811
    alice: User,
) -> None:
    session, plan = start(repo, task_spec(max_retries=0))
    grant(alice, session.project, "operator")
    report = run_next(session, ScriptedModel(*writes("nothing here\n")))
    assert report.task_status == "failed"
    task = plan.tasks.get()
    sent = followup_send(text=WORDS, actor=Actor.of(alice), task=task)
    assert sent.task.status == "todo"
    assert sent.delivery == "attempt 2 starts with it in its brief"
    assert "follow-up: Also add a second line" in sent.task.status_reason
    model = ScriptedModel(*writes("hello\ngoodbye\n"))
    assert run_next(session, model).task_status == "done"
    brief = model.calls[0]["messages"][1]["content"]
    assert "## Follow-up messages from people" in brief
    assert "A message from alice (" in brief
    assert WORDS in brief
    followup = FollowUp.objects.get()
    assert followup.delivered_unit == Unit.objects.get(task=task, attempt=2)
    assert TraceEvent.objects.filter(unit_id=followup.delivered_unit_id, name="followup").exists()


def test_a_followup_on_a_task_in_review_sends_it_back_and_needs_the_approver(
    repo: Path,  # noqa: F811
    alice: User,
) -> None:
    session, plan = start(repo, task_spec(), profile="normal")
    assert run_next(session, ScriptedModel(*writes("hello\n"))).task_status == "review"
    task = plan.tasks.get()
    grant(alice, session.project, "operator")
    with pytest.raises(NotAllowed, match=r"review a task .* needs the approver role"):
        followup_send(text=WORDS, actor=Actor.of(alice), task=task)
    grant(alice, session.project, "approver")
    sent = followup_send(text=WORDS, actor=Actor.of(alice), task=task)
    assert sent.task.status == "todo"
    model = ScriptedModel(*writes("hello\ngoodbye\n"))
    run_next(session, model)
    assert WORDS in model.calls[0]["messages"][1]["content"]


def test_bad_followups_are_refused_with_what_is_wrong(
    repo: Path,  # noqa: F811
    alice: User,
    tmp_path: Path,
) -> None:
    session, plan = start(repo, task_spec())
    task = plan.tasks.get()
    actor = Actor.of(alice)
    grant(alice, session.project, "viewer")
    with pytest.raises(NotAllowed, match=r"steer the session .* needs the operator role"):
        followup_send(text=WORDS, actor=actor, task=task)
    grant(alice, session.project, "operator")
    with pytest.raises(FollowUpInvalid, match="the follow-up message is empty"):
        followup_send(text="  \n ", actor=actor, task=task)
    too_long = "x" * (MAX_FOLLOWUP_CHARS + 1)
    with pytest.raises(FollowUpInvalid, match=f"is {MAX_FOLLOWUP_CHARS + 1} characters; at most"):
        followup_send(text=too_long, actor=actor, task=task)
    other = project_create(name="other", repo_path=str(demo_repo_create(tmp_path / "other")))
    with pytest.raises(FollowUpInvalid, match=f"belongs to project .*, not to project {other.pk}"):
        followup_send(text=WORDS, actor=actor, task=task, project_id=other.pk)
    assert not FollowUp.objects.exists()
    # A task not yet started keeps it for its first attempt.
    sent = followup_send(text=WORDS, actor=actor, task=task)
    assert (sent.task.status, sent.delivery) == ("todo", "attempt 1 starts with it in its brief")


def test_the_cli_sends_a_followup_as_the_acting_person(
    repo: Path,  # noqa: F811
    alice: User,
) -> None:
    session, plan = start(repo, task_spec(max_retries=0))
    run_next(session, ScriptedModel(*writes("nothing here\n")))
    grant(alice, session.project, "viewer")
    args = ("followup", "--session", str(session.pk), "hello", WORDS, "--as", "alice")
    code, _, err = run_sf(*args)
    assert code == 2
    assert "needs the operator role (you are viewer)" in err
    grant(alice, session.project, "operator")
    code, out, _ = run_sf(*args, "--output-format", "json")
    assert code == 0
    answer = json.loads(out)
    assert (answer["task"], answer["task_status"], answer["author"]) == ("hello", "todo", "alice")
    assert answer["delivery"] == "attempt 2 starts with it in its brief"
    unit = Unit.objects.get(task=plan.tasks.get(), attempt=1)
    code, _, err = run_sf("followup", "--unit", str(unit.pk), WORDS, "--as", "alice")
    assert code == 2
    assert "has already ended (failed)" in err
    code, _, err = run_sf("followup", "--session", str(session.pk), "nope", WORDS)
    assert (code, err.strip()) == (2, f"error: no task 'nope' in session {session.pk}")
    assert FollowUp.objects.count() == 1


@pytest.mark.parametrize(
    ("task_status", "unit_status", "kind", "to_unit"),
    [
        ("in_progress", "running", "running", True),
        ("verifying", "running", "verifying", True),
        ("in_progress", "failed", "running", False),  # a later attempt runs
        ("failed", "failed", "retry", False),
        ("review", "succeeded", "changes", False),
        ("paused", "cancelled", "resume", False),
        ("blocked", "blocked", "next", False),
        ("cancelled", "cancelled", "final", False),
        ("done", "succeeded", "final", False),
    ],
)
def test_the_offer_follows_the_task_and_the_unit_shown(
    task_status: str, unit_status: str, kind: str, to_unit: bool
) -> None:
    """What the unit page's box offers (``followup_offer``), as ``_to_task`` decides."""
    offer = followup_offer(Task(key="a", status=task_status), Unit(status=unit_status))
    assert (offer.kind, offer.to_unit) == (kind, to_unit)
    assert ("running agent" in offer.button) == (kind == "running")
    assert bool(offer.button) == (kind != "final")
