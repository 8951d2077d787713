"""The model review's run (docs/model-review.md): once a unit's work has passed
verification, the deep model reads the diff and the task's criteria in review mode,
with read-only tools, and ends with ``review_verdict``. It runs in the unit's own run
(the engine's ``verified`` point), its trace and calls under the unit's id, marked
``"stage": "review"`` so a recording replays it as the review's.

Whatever goes wrong — no deep model, a provider error, a model that never gives a
usable verdict, the time or budget spent, a recording without a review — ends in "no
verdict", which is advisory: a person decides, and nothing waits forever.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db.models import Max, Sum

from agents_app.axes import WorkMode
from agents_app.gate.contract import GateVerdict
from agents_app.gate.policy import decide
from agents_app.gate.schemas import ToolCall
from agents_app.gate.session import SessionGate, gate_context
from agents_app.models import AgentSession, ModelCall, TraceEvent, TraceKind
from agents_app.runtime.llm import ModelRouter, complete, model_settings_for
from agents_app.runtime.loop import AgentLoop, LoopResult
from agents_app.runtime.replay import Replay, replay_activate, replay_deactivate, replay_load
from agents_app.runtime.tools import TOOLS, ToolContext
from agents_app.runtime.trace import TraceRecorder
from agents_app.schemas import ModelReviewMode, ModelReviewPolicy
from sf_core.errors import SfError
from tasks_app.engine.stopping import stop_read
from tasks_app.engine.values import UnitOptions
from tasks_app.features.model_review.prompt import (
    READ_ONLY_TOOLS,
    VERDICT,
    VERDICT_TOOL,
    review_messages,
)
from tasks_app.features.model_review.verdicts import (
    Spend,
    model_review_verdict,
    review_act,
    review_finish,
)
from tasks_app.models import ModelReview, ReviewVerdict, StopKind, Task, Unit
from tasks_app.replays import REVIEW_STAGE, review_replay
from tasks_app.workspaces import Workspace

logger = logging.getLogger("sf.engine")
TRACE_NAME = "model review"


class NotRecorded(SfError):
    """A replayed unit whose recording holds no model review here."""


def model_review_run(task: Task, unit: Unit, ws: Workspace, options: UnitOptions) -> bool:
    """The engine's ``verified`` hook: review ``unit``'s work when the project's policy
    asks for it, and act on the verdict as the policy says (``verdicts.review_finish``).
    True: a person must decide (changes asked for, the task not sent back). A best-of-N
    round's winner was reviewed as an attempt (``attempt_review_run``): its verdict
    acts now."""
    session = AgentSession.objects.select_related("project").get(pk=task.plan.session_id)
    policy = session.project.parsed_policy.model_review
    if policy.mode == ModelReviewMode.OFF:
        return False
    review, created = ModelReview.objects.get_or_create(unit=unit, defaults={"mode": policy.mode})
    if not created:
        if unit.round_id is not None and review.verdict != ReviewVerdict.PENDING:
            return review_act(review, task, policy)
        return False  # a redelivered end of the same unit: reviewed once
    return _run_and_finish(task, unit, ws, options, session, policy, review, act=True)


def attempt_review_run(task: Task, unit: Unit, ws: Workspace, options: UnitOptions) -> str | None:
    """The engine's ``attempt_verdicts`` hook: review a verified best-of-N attempt in its
    own worktree when the project's policy asks for it; its verdict (None: policy off).
    The verdict does not act here (the attempt may not be kept): it ranks the attempt,
    and acts if the attempt wins (``model_review_run``). A review that fails is
    ``no_verdict``, as a single unit's is."""
    session = AgentSession.objects.select_related("project").get(pk=task.plan.session_id)
    policy = session.project.parsed_policy.model_review
    if policy.mode == ModelReviewMode.OFF:
        return None
    review, created = ModelReview.objects.get_or_create(unit=unit, defaults={"mode": policy.mode})
    if created:
        _run_and_finish(task, unit, ws, options, session, policy, review, act=False)
    return model_review_verdict(unit.pk)


def _run_and_finish(
    task: Task,
    unit: Unit,
    ws: Workspace,
    options: UnitOptions,
    session: AgentSession,
    policy: ModelReviewPolicy,
    review: ModelReview,
    *,
    act: bool,
) -> bool:
    """The review's run, whatever ends it, stored (``verdicts.review_finish``)."""
    before = ModelCall.objects.filter(unit_id=unit.pk).aggregate(last=Max("pk"))["last"] or 0
    result: LoopResult | None = None
    problem = ""
    try:
        result = _review(task, unit, ws, options, session, policy)
    except SfError as exc:
        problem = str(exc)
    except Exception as exc:  # never a reason for the task to wait: a person decides
        logger.exception("model review of unit %s failed", unit.pk)
        problem = f"the review failed: {type(exc).__name__}: {exc}"
    return review_finish(
        review=review,
        task=task,
        result=result,
        problem=problem,
        spend=_spent(unit.pk, before),
        policy=policy,
        act=act,
    )


def _review(
    task: Task,
    unit: Unit,
    ws: Workspace,
    options: UnitOptions,
    session: AgentSession,
    policy: ModelReviewPolicy,
) -> LoopResult:
    unit = Unit.objects.get(pk=unit.pk)  # its patch and summary as stored
    budget = _budget_left(session.pk)
    if budget is not None and budget <= 0:
        raise SfError("the session's budget is spent")
    replay = _replay(session, options)
    router = _router(session, options, replay)
    recorder = ReviewRecorder(session=session, unit_id=unit.pk)
    recorder.record(
        TraceKind.NOTE,
        name=TRACE_NAME,
        payload={"text": f"model review ({policy.mode}) by {router.model}, read-only tools"},
    )
    loop = AgentLoop(
        router=router,
        tools={name: TOOLS[name] for name in READ_ONLY_TOOLS} | {VERDICT_TOOL: VERDICT},
        context=ToolContext(worktree=ws.path),
        gate=ReviewGate(SessionGate(session_id=session.pk, worktree=ws.path, unit_id=unit.pk)),
        recorder=recorder,
        hooks=ReviewHooks(task.pk, time.monotonic() + policy.timeout_s),
        max_steps=policy.max_steps,
        budget=budget,
        replay=replay,
    )
    try:
        return loop.run(review_messages(task, unit))
    finally:
        if replay is not None:
            replay_deactivate(replay)


def _replay(session: AgentSession, options: UnitOptions) -> Replay | None:
    """Replaying, the review's recorded answers; never a live model. A recording the
    unit shares with the units after it (``sf replay``, headless) is read in order: the
    review's steps come right after its unit's. Otherwise the session's trace file."""
    shared = options.replay
    if shared is not None:
        steps = shared.model_steps[shared.next_step : shared.next_step + 1]
        if not steps or steps[0].get("stage") != REVIEW_STAGE:
            raise NotRecorded("the recording has no model review here (replay calls no model)")
        return shared
    if not session.replay_trace:
        return None
    found = review_replay(replay_load(session.replay_trace))
    if found is None:
        raise NotRecorded("the recording has no model review (replay calls no model)")
    return found


def _router(session: AgentSession, options: UnitOptions, replay: Replay | None) -> ModelRouter:
    """The deep model (a project's models override the environment's), its fallback;
    a replay's recorded answers instead when replaying."""
    completion = options.completion or _with_idle_timeout
    if replay is not None:
        return ModelRouter(model=replay_activate(replay), completion=completion)
    policy = session.project.parsed_policy
    chosen = model_settings_for("deep", None, policy.models)
    fallback = model_settings_for("fallback", None, policy.models)
    return ModelRouter.from_settings(
        chosen,
        fallback if fallback.model else None,
        completion=completion,
        prices=policy.prices,
    )


def _with_idle_timeout(**kwargs: Any) -> Any:
    return complete(timeout=settings.SF_UNIT_IDLE_TIMEOUT.total_seconds(), **kwargs)


def _budget_left(session_id: int) -> Decimal | None:
    """What the session may still spend (None: no budget)."""
    session = AgentSession.objects.get(pk=session_id)
    if session.cost_budget is None:
        return None
    return max(Decimal(0), session.cost_budget - session.cost_spent)


def _spent(unit_id: int, after_call: int) -> Spend:
    """What the review's model calls cost: the ledger's rows of the unit since it began
    (whatever ended it, a provider error included)."""
    calls = ModelCall.objects.filter(unit_id=unit_id, pk__gt=after_call).aggregate(
        cost=Sum("cost"), tokens_in=Sum("tokens_in"), tokens_out=Sum("tokens_out")
    )
    return Spend(
        tokens_in=calls["tokens_in"] or 0,
        tokens_out=calls["tokens_out"] or 0,
        cost=calls["cost"] or Decimal(0),
    )


@dataclass
class ReviewRecorder(TraceRecorder):
    """The unit's trace, every event of the review marked with its stage."""

    def record(self, kind: str, **fields: Any) -> TraceEvent:
        fields["payload"] = {**(fields.get("payload") or {}), "stage": REVIEW_STAGE}
        return super().record(kind, **fields)


@dataclass
class ReviewGate:
    """The unit's gate in review mode, narrowed to reading: the read-only tools as the
    session gate decides them (recorded), ``review_verdict`` always, nothing else. A
    call the gate would ask a person about is refused: a review waits for nobody."""

    inner: SessionGate
    offered: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.inner.source = self._session

    def _session(self) -> AgentSession:
        session = AgentSession.objects.select_related("project").get(pk=self.inner.session_id)
        session.work_mode = WorkMode.REVIEW  # decided and recorded under review mode
        return session

    def offered_tools(self) -> list[str]:
        if not self.offered:
            shown = set(self.inner.offered_tools())
            self.offered = [name for name in READ_ONLY_TOOLS if name in shown] + [VERDICT_TOOL]
        return self.offered

    def normalize(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return arguments if tool == VERDICT_TOOL else self.inner.normalize(tool, arguments)

    def check(self, tool: str, arguments: dict[str, Any], input_hash: str) -> GateVerdict:
        if tool == VERDICT_TOOL:
            return GateVerdict("allow", "model_review.verdict", "none", "the review's verdict")
        if tool not in READ_ONLY_TOOLS:
            return GateVerdict("deny", "model_review.read_only", "write", "a review only reads")
        context = gate_context(self._session(), self.inner.worktree)
        if decide(ToolCall(tool=tool, input=arguments), context).decision == "ask":
            reason = "a model review asks nobody: this call would need a person's approval"
            return GateVerdict("deny", "model_review.no_asks", "ask", reason)
        return self.inner.check(tool, arguments, input_hash)


@dataclass
class ReviewHooks:
    """The review's time limit, and a person's Cancel of the task."""

    task_id: int
    deadline: float

    def before_model(self) -> str | None:
        if time.monotonic() > self.deadline:
            return "the model review's time is up"
        stop = stop_read(self.task_id)
        if stop is not None and stop.kind == StopKind.CANCEL:
            return stop.words()
        return None

    def notes(self) -> list[str]:
        return []

    def before_tool(self, tool: str) -> str | None:
        return self.before_model()

    def after_tool(self, tool: str, input_hash: str) -> str | None:
        return None
