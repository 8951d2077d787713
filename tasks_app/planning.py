"""Plans from intent: in plan work mode the deep model answers with a ``PlanSpec``.

An invalid answer is sent back once with its validation errors; a second invalid
answer leaves a *rejected* plan that records why.

The planner calls the model through the units' router (``ModelRouter``: waits out
rate limits, backs off on 5xx, then the fallback model). Every call is a trace event
of the session (no unit: ``"stage": "plan"``, as a recorded trace marks the planner's
answer) and its cost is charged to the session. A server that refuses the JSON schema
is asked again for the JSON in the text; a provider that keeps failing ends planning
with ``PlanningFailed``, one line. ``reuse`` (a resumed headless run) answers from an
earlier call with the same request in the session's trace instead of paying again.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.utils import timezone

from agents_app.axes import WorkMode
from agents_app.models import AgentSession, TraceEvent, TraceKind
from agents_app.runtime.llm import DEFAULT_MAX_TOKENS, ModelRouter, complete, model_settings_for
from agents_app.runtime.replay import PROVIDER as REPLAY_PROVIDER
from agents_app.runtime.trace import TraceRecorder
from agents_app.services.budget import session_charge
from sf_core.errors import CommandRejected, PlanInvalid, SfError
from tasks_app.models import Plan, PlanSource, PlanStatus
from tasks_app.replays import PLAN_STAGE
from tasks_app.schemas import PlanSpec, plan_spec_parse
from tasks_app.services import plan_create

Completion = Callable[..., Any]
PLANNER = "planner"  # the name of the planner's notes and errors in the trace


class PlanningFailed(SfError):
    """The planner's model could not be asked: the provider failed or refused."""


SYSTEM_PROMPT = """You are SF's planner. Turn the user's intent into a plan of small,
independently verifiable tasks for coding agents working in git worktrees.
Answer with one JSON object that matches this JSON Schema, and nothing else:
{schema}
Rules: task keys are lower-case slugs; every task has numbered, checkable acceptance
criteria and at least one deterministic shell verify command (tests, linters): the
project's test runner (pytest, python3 -m unittest, npm test) or plain shell checks
(test, grep, diff) — inline code such as python3 -c is not run unattended; use
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
    completion: Completion | None = None,
    sleep: Callable[[float], None] | None = None,
    reuse: bool = False,
) -> Plan:
    """Ask the deep model for a plan. Returns the proposed plan, or a rejected one;
    raises ``PlanningFailed`` when the provider cannot answer."""
    if session.work_mode != WorkMode.PLAN:
        raise CommandRejected(
            f"plans are made in plan work mode, the session is in {session.work_mode}: "
            "use /mode plan"
        )
    if not intent.strip():
        raise CommandRejected("an intent is needed to plan from, e.g. 'add a --verbose flag'")
    router = _router(session, model, completion or _complete, sleep or _sleep)
    planner = _Planner(session=session, router=router, intent=intent, reuse=reuse)
    messages = [
        {
            "role": "system",
            "content": SYSTEM_PROMPT.format(schema=json.dumps(PlanSpec.model_json_schema())),
        },
        {"role": "user", "content": intent},
    ]
    errors = ""
    for _attempt in range(2):
        answer = planner.ask(messages)
        try:
            spec = _parse_answer(answer, intent)
            return planner.made(plan_create(session=session, spec=spec, source=PlanSource.MODEL))
        except PlanInvalid as exc:
            errors = str(exc)
            messages += [
                {"role": "assistant", "content": answer},
                {"role": "user", "content": RETRY_PROMPT.format(errors=errors)},
            ]
    rejected = Plan.objects.create(
        session=session,
        intent=intent,
        source=PlanSource.MODEL,
        status=PlanStatus.REJECTED,
        status_reason=f"the model's plan was invalid twice: {errors}",
    )
    return planner.made(rejected)


def _router(
    session: AgentSession, model: str | None, completion: Completion, sleep: Callable[[float], None]
) -> ModelRouter:
    """The deep model with its endpoint, and the fallback model (a replay has none:
    it never calls a live model)."""
    project_models = session.project.parsed_policy.models
    deep = model_settings_for("deep", model, project_models)
    fallback = model_settings_for("fallback", None, project_models)
    replaying = deep.model.startswith(f"{REPLAY_PROVIDER}/")
    use_fallback = bool(fallback.model) and not replaying
    return ModelRouter(
        model=deep.model,
        endpoint=deep.litellm_options(),
        fallback=fallback.model if use_fallback else "",
        fallback_endpoint=fallback.litellm_options() if use_fallback else {},
        completion=completion,
        sleep=sleep,
        max_tokens=deep.answer_tokens(getattr(settings, "SF_MODEL_MAX_TOKENS", DEFAULT_MAX_TOKENS)),
        sampling=deep.sampling(),
        prices=session.project.parsed_policy.prices,
    )


def _complete(**kwargs: Any) -> Any:
    """The router does the retries and the backoff, not the provider's client."""
    return complete(max_retries=0, **kwargs)


def _sleep(seconds: float) -> None:
    time.sleep(seconds)


class _Planner:
    """The planner's model calls: through the router, into the session's trace, charged."""

    def __init__(
        self, *, session: AgentSession, router: ModelRouter, intent: str, reuse: bool
    ) -> None:
        self.session, self.router, self.intent, self.reuse = session, router, intent, reuse
        self.recorder = TraceRecorder(session=session)

    def ask(self, messages: list[dict[str, Any]]) -> str:
        """The model's answer to ``messages`` (an earlier one's, when reusing)."""
        input_hash = _request_hash(self.router.model, messages)
        earlier = self._earlier(input_hash)
        if earlier is not None:
            self._note({"reused": earlier.pk})
            return str(earlier.payload.get("content") or "")
        started = timezone.now()
        try:
            step = self.router.step(messages, [], response_format=_json_format())
        except SfError as exc:
            self.recorder.record(
                TraceKind.ERROR,
                name=PLANNER,
                payload={"stage": PLAN_STAGE, "error": str(exc), "notes": self._notes()},
                started_at=started,
            )
            raise PlanningFailed(f"planning failed: {exc}") from exc
        self.recorder.model_call(
            step,
            payload={"stage": PLAN_STAGE, "content": step.content, "notes": self._notes()},
            input_hash=input_hash,
            started_at=started,
        )
        if step.cost:
            session_charge(session=self.session, cost=step.cost)
        return step.content

    def made(self, plan: Plan) -> Plan:
        """Note which plan the calls made (proposed or rejected)."""
        self._note({"plan": plan.pk, "status": plan.status})
        return plan

    def _earlier(self, input_hash: str) -> TraceEvent | None:
        if not self.reuse:
            return None
        return (
            TraceEvent.objects.filter(
                session=self.session,
                unit=None,
                kind=TraceKind.MODEL_STEP,
                input_hash=input_hash,
                payload__stage=PLAN_STAGE,
            )
            .order_by("-seq")
            .first()
        )

    def _note(self, payload: dict[str, Any]) -> None:
        self.recorder.record(TraceKind.NOTE, name=PLANNER, payload={"stage": PLAN_STAGE, **payload})

    def _notes(self) -> list[str]:
        notes = list(self.router.notes)
        self.router.notes.clear()
        return notes


def _request_hash(model: str, messages: list[dict[str, Any]]) -> str:
    """The same request (model and conversation) hashes the same: an earlier answer to
    it can stand in for a new call."""
    text = json.dumps({"model": model, "messages": messages}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def _parse_answer(answer: str, intent: str) -> PlanSpec:
    try:
        data = json.loads(_json_text(answer))
    except json.JSONDecodeError as exc:
        raise PlanInvalid(f"(answer): not JSON: {exc.msg} at line {exc.lineno}") from None
    if isinstance(data, dict) and not data.get("intent"):
        data["intent"] = intent
    return plan_spec_parse(data)


def _json_text(answer: str) -> str:
    """The JSON object of an answer: as it is, in a fenced block, or amid prose (a model
    asked without ``response_format`` may say a few words around it)."""
    text = answer.strip()
    if text.startswith("```"):  # tolerate a fenced block
        text = text.strip("`").removeprefix("json").strip()
    if not text.startswith("{") and "{" in text and "}" in text:
        text = text[text.index("{") : text.rindex("}") + 1]
    return text


def _schema() -> dict[str, Any]:
    return PlanSpec.model_json_schema()


def _json_format() -> dict[str, Any]:
    """``response_format``: the answer is a ``PlanSpec`` (a server may refuse it)."""
    return {"type": "json_schema", "json_schema": {"name": "PlanSpec", "schema": _schema()}}
