"""Plans from intent: in plan work mode the deep model answers with a ``PlanSpec``.

The planner sees the repository (``agents_app.runtime.repo_map``: files and top-level
symbols, budgeted) and the reasons people gave for rejecting the session's earlier
plans; its answer is constrained to ``plan_shape.ModelPlanSpec`` (``response_format``)
and shaped by SF's rules (``plan_shape``: policy fields, one task for code and its
test, dependencies, readable keys). An invalid answer is sent back once with its
validation errors; a second invalid answer leaves a *rejected* plan that records why.
A valid plan whose verify commands fail the plan lint (``plan_lint``) is sent back once
with the findings (not when replaying: a recording has no answer to a new question);
what the lint still finds is kept on the plan for the person who accepts it.

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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.utils import timezone

from agents_app.axes import WorkMode
from agents_app.gate.session import gate_rules
from agents_app.mirrors import project_tree
from agents_app.models import AgentSession, TraceEvent, TraceKind
from agents_app.runtime.context import context_window
from agents_app.runtime.instructions import MAX_BYTES as MAX_INSTRUCTION_BYTES
from agents_app.runtime.instructions import TRACE_NAME as INSTRUCTIONS
from agents_app.runtime.instructions import instructions_budget, instructions_read
from agents_app.runtime.llm import DEFAULT_MAX_TOKENS, ModelRouter, complete, model_settings_for
from agents_app.runtime.replay import PROVIDER as REPLAY_PROVIDER
from agents_app.runtime.repo_map import repo_map
from agents_app.runtime.trace import TraceRecorder
from agents_app.services.budget import session_charge
from sf_core.errors import CommandRejected, PlanInvalid, SfError
from tasks_app.models import Plan, PlanSource, PlanStatus
from tasks_app.plan_lint import lint_errors, lint_text, plan_lint
from tasks_app.plan_shape import ModelPlanSpec, plan_shaped
from tasks_app.replays import PLAN_STAGE
from tasks_app.schemas import PlanSpec
from tasks_app.services import plan_create

Completion = Callable[..., Any]
PLANNER = "planner"  # the name of the planner's notes and errors in the trace


class PlanningFailed(SfError):
    """The planner's model could not be asked: the provider failed or refused."""


SYSTEM_PROMPT = """You are SF's planner. Turn the user's intent into a plan of small,
independently verifiable tasks for coding agents working in git worktrees of this
repository. Answer with one JSON object that matches this JSON Schema, and nothing else:
{schema}
Rules:
- Size the plan to the intent: a small change (one function, one fix, one flag, one
  rename) is ONE task that writes the code and its tests together. Split only work
  that is really separate.
- Name real files: only paths from the repository map below, or new files beside them.
- Task keys are readable slugs of the title, e.g. add-is-even.
- Every task has checkable acceptance criteria and at least one verify command: the
  project's test runner on the task's test file (python3 -m pytest -q tests/test_x.py,
  npm test) or plain checks (test -f, grep -q) that pass only once the task is done.
  Never echo, never python3 -c, never a command that edits files (sed -i).
- depends_on: a task that uses another task's files depends on it.

Repository map (files and top-level symbols):
{repo_map}"""

RETRY_PROMPT = """Your plan was not valid:
{errors}
Answer again with the corrected JSON object only."""

LINT_PROMPT = """SF's plan lint found problems in your verify commands:
{findings}
Fix them (a real test or check of each task's files; a program that exists) and answer
again with the corrected JSON object only."""

REJECTED_PROMPT = """A person rejected an earlier plan for this session: {reason}"""


@dataclass(frozen=True)
class LintSetting:
    """How the plan will run, for the lint: the profile, and whether a person accepts it
    (unattended: ``sf headless --autonomous``, an ask does not run)."""

    profile: str | None = None
    unattended: bool = False


def plan_from_intent(
    *,
    session: AgentSession,
    intent: str,
    model: str | None = None,
    completion: Completion | None = None,
    sleep: Callable[[float], None] | None = None,
    reuse: bool = False,
    lint: LintSetting | None = None,
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
    router = _router(session, model, completion or planner_completion, sleep or _sleep)
    planner = _Planner(session=session, router=router, intent=intent, reuse=reuse)
    setting = lint or LintSetting()
    root = project_tree(session.project)  # record mode: the record's base, fetched now
    found = instructions_read(root, budget=_instructions_budget(router))
    planner.recorder.record(
        TraceKind.NOTE, name=INSTRUCTIONS, payload={"stage": PLAN_STAGE, **found.payload()}
    )
    messages = planning_messages(session, intent, instructions=found.section(), root=root)
    errors = ""
    for attempt in range(2):
        answer = planner.ask(messages)
        try:
            spec, notes = plan_shaped(_answer_data(answer), intent)
        except PlanInvalid as exc:
            errors = str(exc)
            messages += _followup(answer, RETRY_PROMPT.format(errors=errors))
            continue
        findings = _lint(session, spec, setting, root)
        if lint_errors(findings) and attempt == 0 and not _replaying(router):
            text = lint_text(lint_errors(findings))
            messages += _followup(answer, LINT_PROMPT.format(findings=text))
            planner.note({"lint": findings})
            continue
        plan = plan_create(session=session, spec=spec, source=PlanSource.MODEL)
        Plan.objects.filter(pk=plan.pk).update(lint=findings)
        plan.lint = findings
        if notes:
            planner.note({"shaped": notes})
        return planner.made(plan)
    rejected = Plan.objects.create(
        session=session,
        intent=intent,
        source=PlanSource.MODEL,
        status=PlanStatus.REJECTED,
        status_reason=f"the model's plan was invalid twice: {errors}",
    )
    return planner.made(rejected)


def planning_messages(
    session: AgentSession, intent: str, *, instructions: str = "", root: Path | None = None
) -> list[dict[str, Any]]:
    """The planner's first request: the rules, the schema, the map of the repository at
    ``root`` (``project_tree``'s unless given) and its root ``instructions``
    (``agents_app.runtime.instructions``: nested ones only named), and the reasons a
    person gave for rejecting earlier plans of the session."""
    system = SYSTEM_PROMPT.format(
        schema=json.dumps(ModelPlanSpec.model_json_schema(), separators=(",", ":")),
        repo_map=repo_map(root or project_tree(session.project)) or "(empty)",
    )
    rejections = Plan.objects.filter(
        session=session, status=PlanStatus.REJECTED, rejected_by__isnull=False
    ).order_by("created_at", "pk")
    # The repository's words go in the user's message, never the system prompt: they
    # are marked as the repository's, and the intent follows them under its own heading.
    asked = f"{instructions}\n\n## The person's intent\n{intent}" if instructions else intent
    user = "\n\n".join(
        [asked, *(REJECTED_PROMPT.format(reason=p.status_reason) for p in rejections)]
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def _instructions_budget(router: ModelRouter) -> int:
    window = context_window(router.model, router.context_window)
    return instructions_budget(
        window, getattr(settings, "SF_INSTRUCTIONS_MAX_BYTES", MAX_INSTRUCTION_BYTES)
    )


def _followup(answer: str, prompt: str) -> list[dict[str, Any]]:
    return [{"role": "assistant", "content": answer}, {"role": "user", "content": prompt}]


def _replaying(router: ModelRouter) -> bool:
    """A replay answers from a recording, in order: it has no answer to a new question."""
    return router.model.startswith(f"{REPLAY_PROVIDER}/")


def _lint(
    session: AgentSession, spec: PlanSpec, setting: LintSetting, root: Path
) -> list[dict[str, str]]:
    return plan_lint(
        spec,
        root=root,
        profile=setting.profile or session.permission_profile,
        rules=gate_rules(session.project),
        unattended=setting.unattended,
        default_verify=session.project.parsed_policy.default_verify,
    )


def planning_interrupted(*, session: AgentSession, intent: str, reason: str) -> None:
    """Note in the session's trace that planning from ``intent`` was cut short (a
    signal, a deadline): a resumed run plans from it again."""
    TraceRecorder(session=session).record(
        TraceKind.NOTE,
        name=PLANNER,
        payload={"stage": PLAN_STAGE, "interrupted": reason, "intent": intent},
    )


def interrupted_intent(session: AgentSession) -> str:
    """The intent of the session's last planning that was cut short, or ""."""
    note = (
        TraceEvent.objects.filter(
            session=session,
            unit=None,
            kind=TraceKind.NOTE,
            name=PLANNER,
            payload__has_key="interrupted",
        )
        .order_by("-seq")
        .first()
    )
    return str(note.payload.get("intent") or "") if note else ""


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


def planner_completion(**kwargs: Any) -> Any:
    """The planner's model call. The router does the retries and the backoff, not the
    provider's client."""
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
            self.note({"reused": earlier.pk})
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
        self.note({"plan": plan.pk, "status": plan.status})
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

    def note(self, payload: dict[str, Any]) -> None:
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


def _answer_data(answer: str) -> Any:
    try:
        return json.loads(_json_text(answer))
    except json.JSONDecodeError as exc:
        raise PlanInvalid(f"(answer): not JSON: {exc.msg} at line {exc.lineno}") from None


def _json_text(answer: str) -> str:
    """The JSON object of an answer: as it is, in a fenced block, or amid prose (a model
    asked without ``response_format`` may say a few words around it)."""
    text = answer.strip()
    if text.startswith("```"):  # tolerate a fenced block
        text = text.strip("`").removeprefix("json").strip()
    if not text.startswith("{") and "{" in text and "}" in text:
        text = text[text.index("{") : text.rindex("}") + 1]
    return text


def _json_format() -> dict[str, Any]:
    """``response_format``: the answer is a ``ModelPlanSpec`` (llama.cpp's server turns
    the schema into a grammar; a server that refuses it is asked again without)."""
    schema = ModelPlanSpec.model_json_schema()
    return {"type": "json_schema", "json_schema": {"name": "PlanSpec", "schema": schema}}
