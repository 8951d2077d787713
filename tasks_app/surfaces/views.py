"""Plan review, plan acceptance and the live task board."""

from __future__ import annotations

import logging

from django.contrib.auth.decorators import login_required
from django.db.models import QuerySet
from django.http import Http404, HttpResponse, QueryDict
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.html import format_html
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseClientRedirect

from agents_app.access import RECOVERY_ACTIONS, Action, profile_action, projects_visible, require
from agents_app.axes import PermissionProfile
from agents_app.badge import badge_for
from agents_app.models import AgentSession, Project
from agents_app.preflight import preflight_of
from sf_core.actors import Actor
from sf_core.errors import SfError
from sf_core.git import GitError
from sf_core.http import AuthedRequest
from sf_core.microcache import PAGES
from skills_app.selectors import invalid_skills
from tasks_app.engine.recovery import RECOVERY
from tasks_app.features.schedules.selectors import schedules_upcoming
from tasks_app.intake import plan_start, units_problem
from tasks_app.lifecycle import ACTION_LABELS
from tasks_app.models import Plan, PlanStatus, Task, TaskStatus
from tasks_app.plan_edit import plan_document, plan_lint_of
from tasks_app.plan_lint import lint_dicts
from tasks_app.replays import recorded_header, recorded_model, recorded_profile
from tasks_app.selectors import plan_waves, task_board
from tasks_app.surfaces.intake_views import session_plans_context

logger = logging.getLogger("sf.web")


@require_GET
@login_required
def plan_detail(request: AuthedRequest, plan_id: int) -> HttpResponse:
    plan = get_object_or_404(Plan.objects.select_related("session__project"), pk=plan_id)
    require(request.user, plan.session.project, Action.VIEW)
    return render(request, "tasks_app/plan_detail.html", plan_context(plan))


@require_POST
@login_required
def plan_accept_view(request: AuthedRequest, plan_id: int) -> HttpResponse:
    """**Accept** or **Run autonomously** (with the chosen permission profile)."""
    plan = get_object_or_404(Plan.objects.select_related("session__project"), pk=plan_id)
    autonomous = request.POST.get("action") == "autonomous"
    profile = request.POST.get("permission_profile") or None
    project = plan.session.project
    require(request.user, project, Action.ACCEPT_PLAN)
    if autonomous:  # running it is running the session at that profile
        require(request.user, project, profile_action(profile or plan.session.permission_profile))
    try:
        plan_start(
            plan=plan,
            actor=Actor.of(request.user),
            autonomous=autonomous,
            permission_profile=profile,
            replay=request.POST.get("replay", ""),
            confirmed=request.POST.get("confirm_unrestricted") == "on",
        )
    except SfError as exc:
        context = {**plan_context(plan), "error": str(exc)}
        if request.htmx:
            return render(request, "tasks_app/plan_detail.html#accept-form", context)
        return render(request, "tasks_app/plan_detail.html", context, status=400)
    board = f"{reverse('task-board')}?session={plan.session_id}"
    return HttpResponseClientRedirect(board) if request.htmx else redirect(board)


@require_GET
@login_required
def session_plans_view(request: AuthedRequest, session_id: int) -> HttpResponse:
    """The plans of a session, for the slot on its page (``agents_app`` leaves it to us)."""
    session = get_object_or_404(AgentSession.objects.select_related("project"), pk=session_id)
    require(request.user, session.project, Action.VIEW)
    context = session_plans_context(session, invalid_skills=invalid_skills(session.project))
    return render(request, "tasks_app/_session_plans.html", context)


@require_GET
@login_required
def task_board_view(request: AuthedRequest) -> HttpResponse:
    session_id, statuses = board_filters(request.GET.get("session"), request.GET.getlist("status"))
    session = board_session(request, session_id)  # the role check: every request
    page = request.GET.get("page")
    board_html, queries = board_shared(request, session, statuses, page)
    if request.htmx:
        return HttpResponse(board_html)
    context: dict[str, object] = {
        "session": session,
        "badge": badge_for(session) if session else None,
        "all_statuses": TaskStatus.values,
        "selected_statuses": statuses,
        "board_html": board_html,
        **queries,
    }
    # The notice is the page's, outside the live partial: the consumer's re-render
    # every SF_STATUS_REFRESH does not query skills.
    context["invalid_skills"] = invalid_skills(session.project) if session else []
    # The schedules' next runs: the session's project, or every visible project.
    projects = projects_visible(request.user)
    if session is not None:
        projects = projects.filter(pk=session.project_id)
    context["upcoming"] = schedules_upcoming(projects=projects)
    return render(request, "tasks_app/board.html", context)


@require_POST
@login_required
def task_recover_view(request: AuthedRequest, task_id: int, action: str) -> HttpResponse:
    """**Retry**, **Skip** or **Cancel** a task from the board (``hx-post``; the CSRF
    header is on ``<body>``). Answers with the board, filtered and on the page it was,
    and the refusal's words when the service refused; without htmx, back to the board."""
    task = get_object_or_404(Task.objects.select_related("plan__session__project"), pk=task_id)
    service = RECOVERY.get(action)
    if service is None:
        raise Http404(f"no such action: {action}")
    require(request.user, task.plan.session.project, RECOVERY_ACTIONS[action])
    error = ""
    try:
        service(task=task, actor=Actor.of(request.user), reason=request.POST.get("reason", ""))
    except SfError as exc:
        error = str(exc)
    if request.htmx and request.htmx.target == "stop-result":  # the unit page's buttons
        # 200: htmx swaps the words in (it drops 4xx bodies); the live state follows.
        words = error or f"{ACTION_LABELS.get(action, action.capitalize())}: asked"
        return HttpResponse(format_html('<p class="{}">{}</p>', "error" if error else "", words))
    session_id, statuses = board_filters(request.GET.get("session"), request.GET.getlist("status"))
    if not request.htmx:
        return redirect(f"{reverse('task-board')}?session={task.plan.session_id}")
    session = board_session(request, session_id)
    visible = projects_visible(request.user)
    context = board_context(session, statuses, visible, page=request.GET.get("page"))
    context["error"] = error
    return render(request, "tasks_app/board.html#board", context, status=200)


def board_shared(
    request: AuthedRequest, session: AgentSession | None, statuses: list[str], page: str | None
) -> tuple[str, dict[str, str]]:
    """The board's live partial and its links' queries, rendered at most once per
    ``SF_PAGE_CACHE`` in this process for everyone who may view ``session``: it is
    theirs alike, as the live consumer's shared render is (``sf_core.microcache`` says
    why a page served from it stays true). The board of every session shows what each
    person may see, so it is theirs alone."""
    who = request.user.pk if session is None else None
    key = ("task-board", session.pk if session else None, tuple(statuses), page, who)

    def draw() -> tuple[str, dict[str, str]]:
        context = board_context(session, statuses, projects_visible(request.user), page=page)
        html = render_to_string("tasks_app/board.html#board", context)
        return html, {
            "ws_query": str(context["ws_query"]),
            "page_query": str(context["page_query"]),
        }

    return PAGES.get(key, draw)


def board_filters(session: str | None, statuses: list[str]) -> tuple[int | None, list[str]]:
    """Query-string filters, with unknown values dropped rather than erroring."""
    session_id = int(session) if session and session.isdigit() else None
    return session_id, [status for status in statuses if status in TaskStatus.values]


def board_session(request: AuthedRequest, session_id: int | None) -> AgentSession | None:
    if session_id is None:
        return None
    session = get_object_or_404(AgentSession.objects.select_related("project"), pk=session_id)
    require(request.user, session.project, Action.VIEW)
    return session


def board_context(
    session: AgentSession | None,
    statuses: list[str],
    projects: QuerySet[Project] | None,
    *,
    page: int | str | None = 1,
) -> dict[str, object]:
    """One page of the board of one session, or of every session of ``projects`` (None:
    all). ``ws_query`` carries the filters and the page: the websocket re-renders that
    very page, and the buttons' answers stay on it."""
    board = task_board(
        session_id=session.pk if session else None,
        statuses=statuses,
        projects=projects,
        page=page or 1,
    )
    filters = QueryDict(mutable=True)
    if session is not None:
        filters["session"] = str(session.pk)
    filters.setlist("status", statuses)
    query = filters.urlencode()
    number = board.page.number if board.page is not None else 1
    return {
        "board": board,
        "session": session,
        "badge": badge_for(session) if session else None,
        "all_statuses": TaskStatus.values,
        "selected_statuses": statuses,
        # For the pages' links: the filters, ready for ``page=`` to follow.
        "page_query": f"{query}&" if query else "",
        "ws_query": "&".join(
            part for part in (query, f"page={number}" if number > 1 else "") if part
        ),
    }


def plan_context(plan: Plan) -> dict[str, object]:
    recorded = recorded_header(plan.session.replay_trace)  # read once for both
    return {
        "plan": plan,
        "session": plan.session,
        "badge": badge_for(plan.session),
        "tasks": _tasks_linted(plan),
        "document": plan_document(plan) if plan.status == PlanStatus.PROPOSED else "",
        "waves": plan_waves(plan),
        "profiles": PermissionProfile.values,
        # A replay's tool calls were judged under the profile it was recorded with.
        "recorded_profile": recorded_profile(recorded),
        "recorded_model": recorded_model(recorded),
        # Before the click: would Run autonomously's units have a model to ask?
        "run_preflight": preflight_of(units_problem(plan.session, autonomous=True)),
    }


def _tasks_linted(plan: Plan) -> list[Task]:
    """The plan's tasks, each with its lint findings (``task.lint``): a proposed plan's
    as it is now, at the session's profile; a decided plan's as they were stored."""
    tasks = list(plan.tasks.prefetch_related("dependencies__depends_on").order_by("position"))
    findings = lint_dicts(plan.lint)
    if plan.status == PlanStatus.PROPOSED:
        try:
            findings = plan_lint_of(plan, profile=plan.session.permission_profile)
        except GitError as exc:  # record mode, the record out of reach: as stored
            logger.warning("plan %s linted as stored: %s", plan.pk, exc)
    for task in tasks:
        task.lint = [f for f in findings if f.get("task") == task.key]  # type: ignore[attr-defined]
    return tasks
