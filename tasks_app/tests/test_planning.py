"""Plans from intent: the deep model answers through litellm (mock responses here)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import override_settings

from agents_app.models import AgentSession
from agents_app.runtime.llm import ModelNotConfigured, complete
from sf_core.errors import CommandRejected
from tasks_app.models import Plan, PlanStatus
from tasks_app.planning import plan_from_intent
from tasks_app.tests.conftest import lint_clean_plan

pytestmark = pytest.mark.django_db
DEEP = "openai/sf-test-deep"


class ScriptedModel:
    """Real litellm completions whose answers come from ``mock_response``, in order."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.calls: list[dict[str, Any]] = []

    def __call__(self, **kwargs: Any) -> Any:
        self.calls.append(kwargs)
        return complete(**kwargs, mock_response=self.answers.pop(0))


GOOD = json.dumps(lint_clean_plan())
BAD = json.dumps({"summary": "x", "tasks": [{"key": "Nope", "title": "t"}]})


@override_settings(SF_MODEL_DEEP=DEEP)
def test_a_valid_answer_becomes_a_proposed_plan(plan_session: AgentSession) -> None:
    model = ScriptedModel(GOOD)
    plan = plan_from_intent(session=plan_session, intent="add a flag", completion=model)
    assert plan.status == PlanStatus.PROPOSED
    assert plan.source == "model"
    assert [t.key for t in plan.tasks.all()] == ["flag", "docs"]
    assert model.calls[0]["model"] == DEEP
    assert model.calls[0]["response_format"]["json_schema"]["name"] == "PlanSpec"
    assert "add a flag" in model.calls[0]["messages"][-1]["content"]


@override_settings(SF_MODEL_DEEP=DEEP)
def test_an_invalid_answer_is_retried_once_with_the_errors(plan_session: AgentSession) -> None:
    model = ScriptedModel(BAD, GOOD)
    plan = plan_from_intent(session=plan_session, intent="add a flag", completion=model)
    assert plan.status == PlanStatus.PROPOSED
    retry = model.calls[1]["messages"][-1]["content"]
    assert "tasks[0] (nope).acceptance_criteria: Field required" in retry  # key made readable


@override_settings(SF_MODEL_DEEP=DEEP)
def test_two_invalid_answers_leave_a_rejected_plan_with_the_reason(
    plan_session: AgentSession,
) -> None:
    model = ScriptedModel("this is not json", BAD)
    plan = plan_from_intent(session=plan_session, intent="add a flag", completion=model)
    assert plan.status == PlanStatus.REJECTED
    assert plan.status_reason.startswith(
        "the model's plan was invalid twice: tasks[0] (nope).acceptance_criteria"
    )
    assert len(model.calls) == 2
    assert plan.tasks.count() == 0


@override_settings(SF_MODEL_DEEP=DEEP)
def test_plans_are_made_in_plan_mode_only(agent_session: AgentSession) -> None:
    with pytest.raises(CommandRejected, match="plans are made in plan work mode"):
        plan_from_intent(session=agent_session, intent="x", completion=ScriptedModel(GOOD))
    assert Plan.objects.count() == 0


@override_settings(SF_MODEL_DEEP="")
def test_no_model_configured_names_the_variables_and_offers_replay(
    plan_session: AgentSession,
) -> None:
    with pytest.raises(ModelNotConfigured) as caught:
        plan_from_intent(session=plan_session, intent="x")
    assert "set SF_MODEL_DEEP" in str(caught.value)
    assert "--replay" in str(caught.value)
