"""The dashboard's session table: each session's outcome, progress, start and finish,
filtered by the query string and cut into pages.

The page and ``SessionTableConsumer`` build their context here from the same query
string, so a live re-render shows exactly the rows the page showed. Every number is
a subquery annotation: one page costs the same few queries whatever its length.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django import forms
from django.core.paginator import Page, Paginator
from django.db.models import (
    Case,
    Count,
    Exists,
    IntegerField,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Value,
    When,
)
from django.db.models.functions import Coalesce
from django.http import QueryDict

from agents_app.access import AnyUser, projects_visible
from agents_app.models import AgentSession, Project, SessionStatus
from tasks_app.models import FINISHED_PLAN_STATUSES, Plan, PlanStatus, Task, TaskStatus

PAGE_SIZE = 20

# A plan's tasks are the session's work once the plan is accepted (and while, or after,
# it runs); drafts, proposals and rejected or superseded plans are not.
WORK_PLAN_STATUSES = (PlanStatus.ACCEPTED, *FINISHED_PLAN_STATUSES)


class Outcome:
    """How a session stands, for people: the filter's values and the row's chip."""

    ACTIVE = "active"
    PAUSED = "paused"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"
    ALL = (ACTIVE, PAUSED, COMPLETED, FAILED, CANCELLED)
    # The chip classes sf.css already colours.
    CHIP = {
        ACTIVE: "status in_progress",
        PAUSED: "warning",
        COMPLETED: "status done",
        FAILED: "status failed",
        CANCELLED: "cancelled",
    }


def _task_count(*statuses: str) -> Coalesce:
    tasks = Task.objects.filter(plan__session=OuterRef("pk"), plan__status__in=WORK_PLAN_STATUSES)
    if statuses:
        tasks = tasks.filter(status__in=statuses)
    counted = tasks.order_by().values("plan__session").annotate(n=Count("pk")).values("n")
    return Coalesce(Subquery(counted, output_field=IntegerField()), 0)


def _has_plan(status: str) -> Exists:
    return Exists(Plan.objects.filter(session=OuterRef("pk"), status=status))


def _outcome() -> Case:
    """Failed and completed come from the session's status (``tasks_app.completion``
    decides them); a completed session none of whose plans got done, only cancelled, was
    cancelled, as is one a person stopped. An active session is paused or active."""
    return Case(
        When(status=SessionStatus.FAILED, then=Value(Outcome.FAILED)),
        When(status=SessionStatus.STOPPED, then=Value(Outcome.CANCELLED)),
        When(
            status=SessionStatus.COMPLETED,
            has_cancelled_plan=True,
            has_done_plan=False,
            then=Value(Outcome.CANCELLED),
        ),
        When(status=SessionStatus.COMPLETED, then=Value(Outcome.COMPLETED)),
        When(paused=True, then=Value(Outcome.PAUSED)),
        default=Value(Outcome.ACTIVE),
    )


def session_rows(sessions: QuerySet[AgentSession]) -> QuerySet[AgentSession]:
    """``sessions`` with ``outcome``, ``tasks_total``, ``tasks_done`` (skipped counts as
    done), ``tasks_skipped`` and ``in_review``, all as subqueries."""
    return (
        sessions.select_related("project")
        .annotate(
            has_done_plan=_has_plan(PlanStatus.DONE),
            has_cancelled_plan=_has_plan(PlanStatus.CANCELLED),
            tasks_total=_task_count(),
            tasks_done=_task_count(TaskStatus.DONE, TaskStatus.SKIPPED),
            tasks_skipped=_task_count(TaskStatus.SKIPPED),
            in_review=_task_count(TaskStatus.REVIEW),
        )
        .annotate(outcome=_outcome())
    )


class SessionFilter(forms.Form):
    """The query string of the dashboard (and of its websocket): every field optional."""

    q = forms.CharField(
        required=False,
        max_length=200,
        error_messages={"max_length": "The search is too long (at most %(limit_value)d)."},
    )
    project = forms.ModelChoiceField(
        queryset=Project.objects.order_by("name"),
        required=False,
        error_messages={"invalid_choice": "There is no project %(value)s."},
    )
    outcome = forms.ChoiceField(
        choices=[("", "any outcome"), *((o, o) for o in Outcome.ALL)],
        required=False,
        error_messages={
            "invalid_choice": f"Unknown outcome %(value)s; accepted: {', '.join(Outcome.ALL)}."
        },
    )
    page = forms.IntegerField(
        required=False,
        min_value=1,
        error_messages={
            "invalid": "The page must be a number.",
            "min_value": "The page must be 1 or more.",
        },
    )


@dataclass
class SessionTable:
    page: Page[AgentSession]
    total: int  # every session, before the filters
    query: str  # the filters (no page) for links and the websocket
    errors: list[str] = field(default_factory=list)

    @property
    def filtered(self) -> bool:
        return bool(self.query)

    @property
    def query_prefix(self) -> str:
        """The filters, ready for ``page=`` to follow (pagination links)."""
        return f"{self.query}&" if self.query else ""

    @property
    def ws_query(self) -> str:
        """What the websocket needs to re-render these very rows: filters and page."""
        number = self.page.number
        return f"{self.query_prefix}page={number}" if number > 1 else self.query


def session_table(params: QueryDict, user: AnyUser) -> SessionTable:
    """The rows the query string asks for, of the projects ``user`` may view. A value
    that does not parse is named in ``errors`` and ignored; the other filters still
    apply (a project the user may not view is "no project", as one that does not exist)."""
    projects = projects_visible(user)
    form = SessionFilter(params)
    form.fields["project"].queryset = projects.order_by("name")  # type: ignore[attr-defined]
    form.is_valid()
    errors = [f"{message} Ignored." for messages in form.errors.values() for message in messages]
    values: dict[str, Any] = form.cleaned_data
    visible = AgentSession.objects.filter(project__in=projects)
    sessions = session_rows(visible)
    if values.get("project") is not None:
        sessions = sessions.filter(project=values["project"])
    if values.get("outcome"):
        sessions = sessions.filter(Q(outcome=values["outcome"]))
    if values.get("q"):
        sessions = sessions.filter(_search(values["q"]))
    paginator = Paginator(sessions.order_by("-created_at", "-pk"), PAGE_SIZE)
    number = values.get("page") or 1
    if number > paginator.num_pages:
        errors.append(f"There is no page {number}; showing page {paginator.num_pages}.")
        number = paginator.num_pages
    query = QueryDict(mutable=True)
    for name in ("q", "project", "outcome"):
        value = values.get(name)
        if value:
            query[name] = str(value.pk if name == "project" else value)
    page = paginator.page(number)
    page.object_list = rows = list(page.object_list)
    for row in rows:
        row.outcome_chip = Outcome.CHIP[row.outcome]  # type: ignore[attr-defined]
    return SessionTable(
        page=page,
        total=visible.count() if query else paginator.count,
        query=query.urlencode(),
        errors=errors,
    )


def _search(text: str) -> Q:
    """The title, or the number of an untitled session (shown as "session 12")."""
    match = Q(title__icontains=text)
    number = text.lower().removeprefix("session").strip()
    return match | Q(pk=int(number)) if number.isdigit() else match


def project_choices(user: AnyUser) -> list[Project]:
    return list(projects_visible(user).order_by("name"))
