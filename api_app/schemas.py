"""What the API takes and answers: pydantic models (ninja ``Schema``), one per shape.

Outputs are built from model rows by the ``*_out`` functions here, so a field the API
shows is named once.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any, Literal

from django.db.models import QuerySet
from ninja import Schema
from pydantic import BaseModel, ConfigDict, Field

from agents_app.axes import ModelMode, PermissionProfile, RunControl, WorkMode
from agents_app.models import AgentSession, Project, RiskDecision
from tasks_app.models import (
    MAX_FOLLOWUP_CHARS,
    AttemptRound,
    FollowUp,
    Plan,
    PlanRequest,
    Task,
    Unit,
)

MAX_LIMIT = 100  # the largest page any list answers
MAX_OFFSET = 1_000_000_000  # PostgreSQL's OFFSET is a bigint; nobody pages this far

# Text the database can store: PostgreSQL refuses NUL in text (and in JSON).
NO_NUL = r"^[^\x00]*$"
# Text that says something: at least one character that is not white space, no NUL.
SAYS = r"^[^\x00]*[^\s\x00][^\x00]*$"


def text_field(max_length: int, *, required: bool = False, description: str = "") -> Any:
    """A string field the database can hold (and, ``required``, not blank)."""
    return Field(
        ... if required else "",
        max_length=max_length,
        min_length=1 if required else 0,
        pattern=SAYS if required else NO_NUL,
        description=description or None,
    )


class In(Schema):
    """An input: unknown fields are an error (a misspelt field is not ignored)."""

    model_config = ConfigDict(extra="forbid")


class Page(In):
    limit: int = Field(50, ge=1, le=MAX_LIMIT, description=f"at most {MAX_LIMIT}")
    offset: int = Field(0, ge=0, le=MAX_OFFSET)

    def of(self, rows: QuerySet[Any, Any], out: Callable[[Any], Any]) -> dict[str, Any]:
        """This page of ``rows``, each through ``out``, and how many rows there are in
        all: the fields of every ``...Page`` answer (``SessionPage(**page.of(...))``)."""
        items = rows[self.offset : self.offset + self.limit]
        return {
            "count": rows.count(),
            "limit": self.limit,
            "offset": self.offset,
            "items": [out(row) for row in items],
        }


class ProjectIn(In):
    name: str = text_field(200, required=True)
    repo_path: str = text_field(1000, required=True, description="a git repository on the server")
    base_branch: str = Field(default="main", min_length=1, max_length=200, pattern=SAYS)
    policy: dict[str, Any] | None = Field(default=None, description="the project's policy")


class ProjectOut(Schema):
    id: int
    name: str
    repo_path: str
    base_branch: str
    role: str | None


class AxesIn(In):
    """Axes to start a session with; the others take SF's defaults for a new session."""

    work_mode: WorkMode | None = None
    run_control: RunControl | None = None
    permission_profile: PermissionProfile | None = None
    model_mode: ModelMode | None = None

    def chosen(self) -> dict[str, str]:
        return {axis: str(value) for axis, value in self.model_dump().items() if value}


class SessionIn(In):
    project_id: int
    title: str = text_field(300)
    axes: AxesIn = Field(default_factory=AxesIn)


class SessionOut(Schema):
    id: int
    project_id: int
    title: str
    status: str
    axes: dict[str, str]
    paused: bool
    pause_reason: str
    activity: str
    created_at: datetime


class CommandIn(In):
    text: str = text_field(
        2000, required=True, description="one command of the grammar, e.g. '/mode build'"
    )


class CommandOut(Schema):
    session: SessionOut
    message: str
    transition_id: int | None
    pending: bool
    data: dict[str, Any]


class IntentIn(In):
    intent: str = text_field(20_000, required=True, description="what you want, in your words")
    replay: str = text_field(1000, description="an offered recorded trace to plan from")


class PlanRequestOut(Schema):
    id: int
    session_id: int
    intent: str
    status: str
    status_reason: str
    plan_id: int | None


class PlanUploadIn(In):
    name: str = Field(
        default="plan.yaml",
        max_length=200,
        pattern=r"^[\w][\w .-]*\.(yaml|yml|json|md)$",
        description="the file's name: .yaml, .yml, .json or .md",
    )
    content: str = text_field(512 * 1024, required=True, description="the plan file's text")


class Built(BaseModel):
    """An output always built field by field (``task_out``), never from a model object:
    plain pydantic, without ninja's per-field attribute resolution (a third of the task
    list's CPU at 100 tasks a page, ``benchmarks/api.py``)."""


class TaskOut(Built):
    id: int
    plan_id: int
    key: str
    title: str
    status: str
    status_reason: str
    risk_level: str
    retry_count: int


class UnitBriefOut(Schema):
    id: int
    attempt: int
    status: str
    model: str
    cost: str
    summary: str
    verification_passed: bool | None
    started_at: datetime
    finished_at: datetime | None
    round_id: int | None = Field(
        default=None, description="the best-of-N round this unit is one attempt of"
    )
    chosen: bool = Field(
        default=False, description="whether this attempt is the one its round kept"
    )


class TaskDetailOut(TaskOut):
    session_id: int
    description: str
    acceptance_criteria: list[str] = Field(description="R1…Rn, in order")
    verify: list[str] = Field(description="the commands the verification gate runs")
    depends_on: list[str] = Field(description="keys of the tasks it waits for")
    hold_reason: str = Field(description="why a paused or blocked task is held")
    max_retries: int
    best_of: int = Field(
        default=1, description="attempts each round runs at once, the best kept (best-of-N)"
    )
    units: list[UnitBriefOut] = Field(description="the task's units (attempts), oldest first")


class PlanOut(Schema):
    id: int
    session_id: int
    intent: str
    summary: str
    status: str
    status_reason: str
    source: str
    accepted_at: datetime | None
    tasks: list[TaskOut]


class AcceptIn(In):
    autonomous: bool = False
    permission_profile: Literal["restricted", "normal", "trusted", "unrestricted"] | None = None
    replay: str = text_field(1000, description="an offered recorded trace the units answer from")
    confirm_unrestricted: bool = False


class TaskReviewIn(In):
    action: Literal["approve", "request_changes"]
    reason: str = text_field(20_000, description="what should change (request_changes)")


class FollowUpIn(In):
    # Empty and too long are the service's to refuse, in its words (the same on every
    # surface): "the follow-up message is empty", "… at most 4000".
    text: str = Field(
        pattern=NO_NUL, description=f"the message for the task's agent (≤ {MAX_FOLLOWUP_CHARS})"
    )
    project_id: int | None = Field(
        default=None, description="the project you mean: a task of another one is refused"
    )


class FollowUpOut(Built):
    id: int
    task_id: int
    task_key: str
    task_status: str
    unit_id: int | None = Field(description="the running unit it was sent to, if one")
    author: str
    text: str
    created_at: datetime
    delivered_at: datetime | None
    delivered_unit_id: int | None
    delivery: str = Field(description="what happens to it, in words")


class TaskPage(Built):
    count: int
    limit: int
    offset: int
    items: list[TaskOut]


class TraceEventOut(Schema):
    seq: int
    kind: str
    name: str
    payload: dict[str, Any]


class FileDiffOut(Schema):
    path: str
    status: str
    added: int
    removed: int


class UnitOut(Schema):
    id: int
    task_id: int
    attempt: int
    status: str
    model: str
    summary: str
    verification_passed: bool | None
    verification_output: str
    cost: str
    trace: list[TraceEventOut]
    files: list[FileDiffOut]
    patch: str


class DecisionOut(Schema):
    id: int
    session_id: int
    project_id: int
    tool: str
    input: Any
    risk_class: str
    decision: str
    reason: str
    review_status: str
    review_scope: str
    created_at: datetime


class DecisionPage(Schema):
    count: int
    limit: int
    offset: int
    items: list[DecisionOut]


class ReviewIn(In):
    action: Literal["approve", "reject"]
    scope: Literal["once", "session", "project"] = "once"
    note: str = text_field(2000)
    match: Literal["exact", "family"] = "exact"


class SkillOut(Schema):
    name: str
    scope: str
    description: str
    valid: bool
    problem: str
    user_invocable: bool


def project_out(project: Project, role: str | None) -> ProjectOut:
    return ProjectOut(
        id=project.pk,
        name=project.name,
        repo_path=project.repo_path,
        base_branch=project.base_branch,
        role=role,
    )


def session_out(session: AgentSession) -> SessionOut:
    return SessionOut(
        id=session.pk,
        project_id=session.project_id,
        title=session.title,
        status=session.status,
        axes=session.axes.as_dict(),
        paused=session.paused,
        pause_reason=session.pause_reason,
        activity=session.activity,
        created_at=session.created_at,
    )


def plan_request_out(request: PlanRequest) -> PlanRequestOut:
    return PlanRequestOut(
        id=request.pk,
        session_id=request.session_id,
        intent=request.intent,
        status=request.status,
        status_reason=request.status_reason,
        plan_id=request.plan_id,
    )


def followup_out(followup: FollowUp, task: Task, delivery: str) -> FollowUpOut:
    return FollowUpOut(
        id=followup.pk,
        task_id=task.pk,
        task_key=task.key,
        task_status=task.status,
        unit_id=followup.unit_id,
        author=followup.author_label,
        text=followup.text,
        created_at=followup.created_at,
        delivered_at=followup.delivered_at,
        delivered_unit_id=followup.delivered_unit_id,
        delivery=delivery,
    )


def task_out(task: Task) -> TaskOut:
    return TaskOut(
        id=task.pk,
        plan_id=task.plan_id,
        key=task.key,
        title=task.title,
        status=task.status,
        status_reason=task.status_reason,
        risk_level=task.risk_level,
        retry_count=task.retry_count,
    )


def task_detail_out(task: Task, units: list[Unit]) -> TaskDetailOut:
    depends_on = task.dependencies.select_related("depends_on").order_by("depends_on__position")
    kept = set(AttemptRound.objects.filter(task=task).values_list("winner_id", flat=True))
    return TaskDetailOut(
        **task_out(task).model_dump(),
        session_id=task.plan.session_id,
        description=task.description,
        acceptance_criteria=[str(item) for item in task.acceptance_criteria],
        verify=[str(item) for item in task.verify],
        depends_on=[edge.depends_on.key for edge in depends_on],
        hold_reason=task.hold_reason,
        max_retries=task.max_retries,
        best_of=task.best_of,
        units=[
            UnitBriefOut(
                id=unit.pk,
                attempt=unit.attempt,
                status=unit.status,
                model=unit.model,
                cost=str(unit.cost),
                summary=unit.summary,
                verification_passed=unit.verification_passed,
                started_at=unit.started_at,
                finished_at=unit.finished_at,
                round_id=unit.round_id,
                chosen=unit.pk in kept,
            )
            for unit in units
        ],
    )


def plan_out(plan: Plan) -> PlanOut:
    return PlanOut(
        id=plan.pk,
        session_id=plan.session_id,
        intent=plan.intent,
        summary=plan.summary,
        status=plan.status,
        status_reason=plan.status_reason,
        source=plan.source,
        accepted_at=plan.accepted_at,
        tasks=[task_out(task) for task in plan.tasks.order_by("position")],
    )


def decision_out(decision: RiskDecision) -> DecisionOut:
    return DecisionOut(
        id=decision.pk,
        session_id=decision.session_id,
        project_id=decision.session.project_id,
        tool=decision.tool,
        input=decision.input_normalized,
        risk_class=decision.risk_class,
        decision=decision.decision,
        reason=decision.reason,
        review_status=decision.review_status,
        review_scope=decision.review_scope,
        created_at=decision.created_at,
    )


def unit_out(unit: Unit, trace: list[TraceEventOut], files: list[FileDiffOut]) -> UnitOut:
    return UnitOut(
        id=unit.pk,
        task_id=unit.task_id,
        attempt=unit.attempt,
        status=unit.status,
        model=unit.model,
        summary=unit.summary,
        verification_passed=unit.verification_passed,
        verification_output=unit.verification_output,
        cost=str(unit.cost),
        trace=trace,
        files=files,
        patch=unit.checkpoint_patch,
    )
