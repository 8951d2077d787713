"""The parts of headless that need no subprocess: schemas, answers files, descriptions."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from pydantic import ValidationError

from agents_app.models import ReviewStatus, RiskDecision
from tasks_app.features.headless.answers import AnswersInvalid, answers_apply, answers_load
from tasks_app.features.headless.cli import describe
from tasks_app.features.headless.events import EVENT_ADAPTER, event_parse
from tasks_app.features.headless.supervisor import backoff

EVENT_TYPES = {
    "session",
    "transition",
    "plan",
    "task",
    "unit",
    "tool_call",
    "decision",
    "heartbeat",
    "restart",
    "result",
}


def test_the_event_schema_documents_every_event_type() -> None:
    out = io.StringIO()
    call_command("sf", "headless", "--event-schema", stdout=out)
    schema = json.loads(out.getvalue())
    kinds = {
        definition["properties"]["type"]["const"]
        for definition in schema["$defs"].values()
        if "type" in definition.get("properties", {})
    }
    assert kinds == EVENT_TYPES
    assert set(schema["discriminator"]["mapping"]) == EVENT_TYPES


def test_an_event_of_unknown_type_or_with_extra_fields_does_not_validate() -> None:
    good = {
        "type": "restart",
        "at": "2026-11-23T00:00:00Z",
        "restart": 1,
        "of": 3,
        "after_s": 5.0,
        "reason": "crashed",
    }
    assert event_parse(json.dumps(good)).type == "restart"
    with pytest.raises(ValidationError):
        event_parse(json.dumps({**good, "type": "nonsense"}))
    with pytest.raises(ValidationError):
        event_parse(json.dumps({**good, "surprise": 1}))
    assert describe(EVENT_ADAPTER.validate_python(good)) == ""  # the supervisor says it


def test_backoff_is_5_then_10_then_capped_at_30() -> None:
    assert [backoff(n) for n in range(1, 6)] == [5.0, 10.0, 30.0, 30.0, 30.0]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("- just a list", "expected a mapping"),
        ("approvals: [{tool: run_command, decision: maybe}]", "approvals.0.decision"),
        ("ask_user: {q: 1}\n", "ask_user.q"),
        ("surprise: 1", "surprise"),
        ("ask_user: [unclosed", "not YAML or JSON"),
    ],
)
def test_a_bad_answers_file_names_the_file_and_the_field(
    tmp_path: Path, text: str, message: str
) -> None:
    path = tmp_path / "answers.yaml"
    path.write_text(text)
    with pytest.raises(AnswersInvalid) as error:
        answers_load(path)
    assert str(path) in str(error.value)
    assert message in str(error.value)


def test_a_missing_answers_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(AnswersInvalid, match=r"missing\.yaml: cannot read"):
        answers_load(tmp_path / "missing.yaml")


@pytest.mark.django_db
def test_answers_settle_only_the_decisions_they_match(agent_session, tmp_path: Path) -> None:
    def pending(command: str) -> RiskDecision:
        return RiskDecision.objects.create(
            session=agent_session,
            tool="run_command",
            input_normalized={"command": command},
            input_hash=command,
            risk_class="install",
            decision="ask",
            rule="r",
            reason="x",
            work_mode="build",
            run_control="autonomous",
            permission_profile="normal",
            model_mode="smart",
            surface="headless",
            review_status=ReviewStatus.PENDING,
        )

    install, push = pending("pip install lxml"), pending("git push origin main")
    path = tmp_path / "answers.yaml"
    path.write_text(
        "approvals:\n"
        "  - {tool: run_command, match: 'pip install *', decision: approve}\n"
        "  - {tool: write_file, decision: reject}\n"
    )
    assert answers_apply(answers_load(path), session_id=agent_session.pk) == 1
    install.refresh_from_db()
    push.refresh_from_db()
    assert install.review_status == ReviewStatus.APPROVED
    assert install.review_scope == "once"
    assert install.reviewed_by is None
    assert push.review_status == ReviewStatus.PENDING  # nobody answered it
