"""Plans from intent: in plan work mode the deep model answers with a ``PlanSpec``.

An invalid answer is sent back once with its validation errors; a second invalid
answer leaves a *rejected* plan that records why.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from agents_app.axes import WorkMode
from agents_app.models import AgentSession
from agents_app.runtime.llm import complete, model_settings_for
from sf_core.errors import CommandRejected, PlanInvalid
from tasks_app.models import Plan, PlanSource, PlanStatus
from tasks_app.schemas import PlanSpec, plan_spec_parse
from tasks_app.services import plan_create

Completion = Callable[..., Any]

SYSTEM_PROMPT = """You are SF's planner. Turn the user's intent into a plan of small,
independently verifiable tasks for coding agents working in git worktrees.
Answer with one JSON object that matches this JSON Schema, and nothing else:
{schema}
Rules: task keys are lower-case slugs; every task has numbered, checkable acceptance
criteria and at least one deterministic shell verify command (tests, linters); use
depends_on only for real ordering constraints; list the files each task intends to
touch in intent_claim."""

RETRY_PROMPT = """Your plan was not valid:
{errors}
Answer again with the corrected JSON object only."""


def plan_from_intent(
    *,
    session: AgentSession,
    intent: str,
    model: str | None = None,
    completion: Completion = complete,
) -> Plan:
    """Ask the deep model for a plan. Returns the proposed plan, or a rejected one."""
    if session.work_mode != WorkMode.PLAN:
        raise CommandRejected(
            f"plans are made in plan work mode, the session is in {session.work_mode}: "
            "use /mode plan"
        )
    if not intent.strip():
        raise CommandRejected("an intent is needed to plan from, e.g. 'add a --verbose flag'")
    deep = model_settings_for("deep", model, session.project.parsed_policy.models)
    chosen, endpoint = deep.model, deep.litellm_options()
    messages = [
        {
            "role": "system",
            "content": SYSTEM_PROMPT.format(schema=json.dumps(PlanSpec.model_json_schema())),
        },
        {"role": "user", "content": intent},
    ]
    errors = ""
    for _attempt in range(2):
        response = completion(model=chosen, messages=messages, **endpoint, **_json_format())
        answer = _answer_text(response)
        try:
            spec = _parse_answer(answer, intent)
            return plan_create(session=session, spec=spec, source=PlanSource.MODEL)
        except PlanInvalid as exc:
            errors = str(exc)
            messages += [
                {"role": "assistant", "content": answer},
                {"role": "user", "content": RETRY_PROMPT.format(errors=errors)},
            ]
    return Plan.objects.create(
        session=session,
        intent=intent,
        source=PlanSource.MODEL,
        status=PlanStatus.REJECTED,
        status_reason=f"the model's plan was invalid twice: {errors}",
    )


def _parse_answer(answer: str, intent: str) -> PlanSpec:
    text = answer.strip()
    if text.startswith("```"):  # tolerate a fenced block
        text = text.strip("`").removeprefix("json").strip()
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PlanInvalid(f"(answer): not JSON: {exc.msg} at line {exc.lineno}") from None
    if isinstance(data, dict) and not data.get("intent"):
        data["intent"] = intent
    return plan_spec_parse(data)


def _answer_text(response: Any) -> str:
    content = response.choices[0].message.content
    return content if isinstance(content, str) else ""


def _schema() -> dict[str, Any]:
    return PlanSpec.model_json_schema()


def _json_format() -> dict[str, Any]:
    return {
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "PlanSpec", "schema": _schema()},
        }
    }
