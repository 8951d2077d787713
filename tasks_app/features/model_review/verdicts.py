"""What a model review's answer becomes: its verdict and reasons (``ModelReview``), its
line comments (``DiffComment``, ``by_model``; a comment on a line the diff does not show
is dropped, with a note), its cost charged to the unit, task and session, and — when
the project's policy requires the review — a request for changes that sends the task
back for another attempt, exactly as a person's "Request changes" does.

``model_review_verdict(unit)`` is the verdict others read (best-of-N's ranking).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from decimal import Decimal

from django.db import transaction
from django.db.models import F
from django.utils import timezone
from pydantic import ValidationError

from agents_app.gate.redaction import redact_text
from agents_app.models import AgentSession, ModelCall, TraceEvent, TraceKind
from agents_app.runtime.loop import LoopResult, Outcome
from agents_app.schemas import ModelReviewMode, ModelReviewPolicy
from agents_app.services.budget import session_charge
from sf_core.actors import Actor
from sf_core.errors import SfError
from sf_core.live import Groups, broadcast
from tasks_app.engine.review import task_request_changes
from tasks_app.features.line_comments import diff_line_text
from tasks_app.features.model_review.prompt import VerdictInput
from tasks_app.models import (
    DiffComment,
    ModelReview,
    ReviewVerdict,
    Task,
    Unit,
)
from tasks_app.replays import REVIEW_STAGE

REVIEWER = "model review"  # the actor of a task the review sends back
MAX_REASON_CHARS = 4000  # of the reasons in the task's transition (the brief quotes them)


@dataclass(frozen=True)
class Spend:
    tokens_in: int = 0
    tokens_out: int = 0
    cost: Decimal = Decimal(0)


def model_review_verdict(unit: Unit | int) -> str | None:
    """The model review's verdict on ``unit``'s work: ``"approve"``,
    ``"request_changes"`` or ``"no_verdict"``; None when it was not reviewed (policy
    off, verification failed) or the review still runs."""
    unit_id = unit if isinstance(unit, int) else unit.pk
    verdict = ModelReview.objects.filter(unit_id=unit_id).values_list("verdict", flat=True).first()
    return None if verdict in (None, ReviewVerdict.PENDING) else verdict


def review_finish(
    *,
    review: ModelReview,
    task: Task,
    result: LoopResult | None,
    problem: str,
    spend: Spend,
    policy: ModelReviewPolicy,
    act: bool = True,
) -> bool:
    """Store the review's outcome and, with ``act``, act on it (``review_act``); whether
    a person must now decide. A best-of-N attempt's review does not act: the round's
    winner's does, once it is kept (``runner.model_review_run``)."""
    notes: list[str] = []
    answer = _answer(review.unit_id, result, notes) if not problem else None
    if problem:
        notes.append(f"no verdict: {problem}")
    verdict: str = answer.verdict if answer is not None else ReviewVerdict.NO_VERDICT
    model = _model(review.unit_id)
    with transaction.atomic():
        _charge(review, task, spend)
        if answer is not None:
            _comments(review.unit_id, answer, model, notes)
        ModelReview.objects.filter(pk=review.pk).update(
            verdict=verdict,
            reasons=redact_text(answer.reasons) if answer is not None else "",
            model=model,
            finished_at=timezone.now(),
        )
        _notes(review, notes)
    review_changed(review.unit_id)
    return review_act(review, task, policy) if act else False


def review_act(review: ModelReview, task: Task, policy: ModelReviewPolicy) -> bool:
    """What a finished review's verdict does: a request for changes sends the task back
    when the review is required (``_send_back``); whether a person must now decide (a
    request for changes that did not send the task back)."""
    review.refresh_from_db()
    if review.verdict != ReviewVerdict.REQUEST_CHANGES:
        return False
    notes = list(review.notes)
    sent = review.mode == ModelReviewMode.REQUIRED and _send_back(review, task, policy, notes)
    _notes(review, notes)
    review_changed(review.unit_id)
    return not sent


def review_changed(unit_id: int) -> None:
    """The unit's open pages show the review as it is now (``UnitConsumer``), after the
    commit of what changed it."""
    broadcast(Groups.unit(unit_id), "review.changed")


def _answer(unit_id: int, result: LoopResult | None, notes: list[str]) -> VerdictInput | None:
    """The verdict the model gave (``review_verdict``), or one it wrote as text."""
    if result is not None and result.outcome == Outcome.FINISHED:
        try:
            return VerdictInput.model_validate_json(result.summary)
        except ValidationError as exc:  # the tool validated it: a bug, not the model
            notes.append(f"no verdict: it could not be read ({exc.error_count()} problems)")
            return None
    found = _verdict_in_text(unit_id)
    ended = f"{result.outcome}: {result.detail}" if result is not None else "without an answer"
    if found is None:
        notes.append(f"no verdict: the review ended {ended} without calling review_verdict")
        return None
    notes.append(f"the verdict was read from the model's text (it ended {ended})")
    return found


def _verdict_in_text(unit_id: int) -> VerdictInput | None:
    """A verdict object the model wrote in its last answer instead of calling the tool."""
    last = (
        TraceEvent.objects.filter(
            unit_id=unit_id, kind=TraceKind.MODEL_STEP, payload__stage=REVIEW_STAGE
        )
        .order_by("-seq")
        .values_list("payload", flat=True)
        .first()
    )
    content = str((last or {}).get("content") or "")
    decoder = json.JSONDecoder()
    for start in (i for i, char in enumerate(content) if char == "{"):
        try:
            value, _ = decoder.raw_decode(content, start)
        except ValueError:
            continue
        if isinstance(value, dict) and isinstance(value.get("arguments"), dict):
            value = value["arguments"]  # a tool call written as text, not recognised
        try:
            return VerdictInput.model_validate(value)
        except ValidationError:
            continue
    return None


def _model(unit_id: int) -> str:
    """The model that answered the review's last step ("" if none did)."""
    calls = ModelCall.objects.filter(
        unit_id=unit_id, trace_event__payload__stage=REVIEW_STAGE
    ).order_by("-pk")
    return calls.values_list("model", flat=True).first() or ""


def _comments(unit_id: int, answer: VerdictInput, model: str, notes: list[str]) -> None:
    """The model's comments on lines its unit's diff shows; the others dropped, noted."""
    unit = Unit.objects.get(pk=unit_id)
    for comment in answer.comments:
        line_text = diff_line_text(unit, path=comment.path, line=comment.line, side=comment.side)
        if line_text is None:
            where = f"{comment.path}:{comment.line}" + (" (old)" if comment.side == "old" else "")
            notes.append(f"a comment on {where} was dropped: the diff has no such line")
            continue
        DiffComment.objects.create(
            unit=unit,
            path=comment.path,
            line=comment.line,
            side=comment.side,
            line_text=line_text,
            text=redact_text(comment.text),
            author_label=f"{REVIEWER} ({model})" if model else REVIEWER,
            by_model=True,
        )


def _charge(review: ModelReview, task: Task, spend: Spend) -> None:
    """The review's calls count as the unit's, its task's and its session's."""
    ModelReview.objects.filter(pk=review.pk).update(
        tokens_in=spend.tokens_in, tokens_out=spend.tokens_out, cost=spend.cost
    )
    Unit.objects.filter(pk=review.unit_id).update(
        tokens_in=F("tokens_in") + spend.tokens_in,
        tokens_out=F("tokens_out") + spend.tokens_out,
        cost=F("cost") + spend.cost,
    )
    if spend.cost:
        Task.objects.filter(pk=task.pk).update(cost_spent=F("cost_spent") + spend.cost)
        session_charge(session=AgentSession.objects.get(pk=task.plan.session_id), cost=spend.cost)


def _send_back(
    review: ModelReview, task: Task, policy: ModelReviewPolicy, notes: list[str]
) -> bool:
    """Required: the task goes back for another attempt with the reasons and the
    comments in its brief (``engine.review.task_request_changes``), unless it left
    review meanwhile or this reviewer sent it back ``max_rounds`` times already."""
    task.refresh_from_db()
    rounds = ModelReview.objects.filter(unit__task=task, sent_back=True).count()
    if rounds >= policy.max_rounds:
        notes.append(f"not sent back: it was sent back {rounds} times already; a person decides")
        return False
    reasons = ModelReview.objects.values_list("reasons", flat=True).get(pk=review.pk)
    try:
        with transaction.atomic():
            task_request_changes(
                task=task, actor=Actor.system(REVIEWER), reason=reasons[:MAX_REASON_CHARS]
            )
            ModelReview.objects.filter(pk=review.pk).update(sent_back=True)
    except SfError as exc:  # it left review meanwhile (a person approved it)
        notes.append(f"not sent back: {exc}")
        return False
    notes.append("sent back for another attempt (the policy requires the review)")
    return True


def _notes(review: ModelReview, notes: list[str]) -> None:
    ModelReview.objects.filter(pk=review.pk).update(notes=[redact_text(n) for n in notes])


def review_context(unit: Unit) -> dict[str, object]:
    """The unit page's model review and its line comments, or nothing (read with the
    unit when it was selected with ``model_review``: no query for a unit without one).
    The page and its live card (``UnitConsumer``) show the same."""
    try:
        review = unit.model_review
    except ModelReview.DoesNotExist:
        return {}
    comments = list(DiffComment.objects.filter(unit_id=unit.pk, by_model=True).order_by("pk"))
    return {"model_review": review, "model_comments": comments}
