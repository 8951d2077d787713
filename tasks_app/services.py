"""Services for plans and tasks: creating a plan from a spec, accepting it, scheduling
ready tasks and claiming them race-free between workers.

This is the domain below the engine (``tasks_app.engine``): it never imports it. A
change that may make work runnable sends ``sf_core.signals.session_runnable``."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from agents_app.axes import ModelMode, PermissionProfile, RunControl, WorkMode
from agents_app.models import AgentSession
from agents_app.services import session_change_mode, session_reopen
from sf_core.actors import Actor
from sf_core.errors import InvalidTransition, PlanInvalid
from sf_core.live import Groups, broadcast
from sf_core.signals import send_on_commit, session_runnable
from tasks_app.lifecycle import task_groups, task_transition
from tasks_app.models import (
    HoldReason,
    Plan,
    PlanSource,
    PlanStatus,
    ScheduleStatus,
    Task,
    TaskDependency,
    TaskSchedule,
    TaskStatus,
)
from tasks_app.plan_shape import POLICY_FIELDS
from tasks_app.scheduler import Edge, blockers_of, edges_by
from tasks_app.schemas import PlanSpec, TaskSpec

OPEN_PLAN_STATUSES = (PlanStatus.DRAFT, PlanStatus.PROPOSED)
# Schedules that may become due: queued (new), expired (a lost claim) or consumed
# (a task back in todo after review or an approval).
WAITING_SCHEDULES = (ScheduleStatus.QUEUED, ScheduleStatus.EXPIRED, ScheduleStatus.CONSUMED)


def plan_create(*, session: AgentSession, spec: PlanSpec, source: str) -> Plan:
    """Store a validated plan as *proposed*; an earlier open plan is superseded.

    Tasks without verify commands take the project's ``default_verify``; a task left
    with none makes the whole plan invalid (nothing is written). A model's plan sets no
    limits: its tasks' retries and cost budgets are SF's (``policy_limits``), whatever
    the model wrote (``"max_retries": 0`` removed every retry of a live run).
    """
    if source == PlanSource.MODEL:
        spec = policy_limits(spec)
    default_verify = session.project.parsed_policy.default_verify
    plan_verify_required(spec, default_verify)
    plan_best_of_check(spec, session.project.parsed_policy.best_of.cap)
    with transaction.atomic():
        Plan.objects.filter(session=session, status__in=OPEN_PLAN_STATUSES).update(
            status=PlanStatus.SUPERSEDED, status_reason="superseded by a newer plan"
        )
        plan = Plan.objects.create(
            session=session,
            intent=spec.intent,
            summary=spec.summary,
            source=source,
            status=PlanStatus.PROPOSED,
        )
        plan_tasks_create(plan=plan, spec=spec, default_verify=default_verify)
        plans_changed(session_id=plan.session_id)
    return plan


def plan_reject(*, plan: Plan, reason: str, rejected_by: User | None = None) -> Plan:
    """Reject an open plan with a reason; a person's reason is told to the planner when
    the session plans again (``planning.planning_messages``)."""
    with transaction.atomic():
        updated = Plan.objects.filter(pk=plan.pk, status__in=OPEN_PLAN_STATUSES).update(
            status=PlanStatus.REJECTED, status_reason=reason, rejected_by=rejected_by
        )
        if updated != 1:
            raise InvalidTransition(
                f"plan {plan.pk} is {plan.status}; only an open plan can be rejected"
            )
        plans_changed(session_id=plan.session_id)
    plan.refresh_from_db()
    return plan


def plan_accept(
    *,
    plan: Plan,
    actor: Actor,
    autonomous: bool = False,
    permission_profile: str | None = None,
    start: bool = True,
) -> Plan:
    """Accept a proposed plan: the explicit act between planning and building.

    ``autonomous`` is **Run autonomously**: the session moves to
    ``build | autonomous | <profile> | smart`` (one logged transition) and dispatch
    starts. Plain accept moves to build and keeps the run control. ``start=False``
    (headless, replay): the caller runs the units itself, so nobody is told.
    """
    if permission_profile is not None and permission_profile not in PermissionProfile.values:
        raise PlanInvalid(
            f"unknown permission profile {permission_profile!r}; accepted: "
            + ", ".join(PermissionProfile.values)
        )
    with transaction.atomic():
        session = AgentSession.objects.select_for_update().get(pk=plan.session_id)
        changes = _accept_changes(session, autonomous, permission_profile)
        _mark_accepted(plan, actor, session, changes)
        # A session whose earlier plans finished is active again for this one.
        session_reopen(session=session, reason=f"plan {plan.pk} accepted", actor=actor)
        verb = "run autonomously" if autonomous else "accepted"
        session_change_mode(
            session=session,
            changes=changes,
            reason=f"plan {plan.pk} {verb}",
            actor=actor,
            resume=autonomous,
        )
        TaskSchedule.objects.bulk_create(TaskSchedule(task=task) for task in plan.tasks.all())
        plan.refresh_from_db()
        schedule_ready(plan=plan)
        plans_changed(session_id=plan.session_id)
        if start:  # the engine hands the ready tasks to the workers, after commit
            send_on_commit(session_runnable, sender=AgentSession, session_id=plan.session_id)
    return plan


def _accept_changes(
    session: AgentSession, autonomous: bool, permission_profile: str | None
) -> dict[str, str]:
    """The axes an accepted plan moves the session to."""
    changes: dict[str, str] = {"work_mode": WorkMode.BUILD}
    if autonomous:
        changes |= {
            "run_control": RunControl.AUTONOMOUS,
            "permission_profile": permission_profile or session.permission_profile,
            "model_mode": ModelMode.SMART,
        }
    elif permission_profile:
        changes["permission_profile"] = permission_profile
    return changes


def _mark_accepted(
    plan: Plan, actor: Actor, session: AgentSession, changes: dict[str, str]
) -> None:
    """The conditional update that makes acceptance happen once."""
    updated = Plan.objects.filter(pk=plan.pk, status=PlanStatus.PROPOSED).update(
        status=PlanStatus.ACCEPTED,
        accepted_at=timezone.now(),
        accepted_by=actor.user if isinstance(actor.user, User) else None,
        accepted_run_control=changes.get("run_control", session.run_control),
        accepted_permission_profile=changes.get("permission_profile", session.permission_profile),
    )
    if updated != 1:
        raise InvalidTransition(
            f"plan {plan.pk} is {plan.status}; only a proposed plan can be accepted"
        )


def schedule_ready(*, plan: Plan) -> list[Task]:
    """Mark every ready task's schedule *due*; block tasks whose dependency ended the
    wrong way (a person decides what happens to them). Returns the newly due tasks."""
    # Only tasks that are todo and not yet due can change; three queries whatever the
    # plan's size, plus one update per task that becomes due.
    candidates = list(
        plan.tasks.filter(
            status=TaskStatus.TODO, schedule__status__in=WAITING_SCHEDULES
        ).select_related("plan")
    )
    if not candidates:
        return []
    statuses = dict(plan.tasks.values_list("key", "status"))
    by_task = edges_by(plan_edges(plan))
    due: list[Task] = []
    for task in candidates:
        blockers = blockers_of(task.key, by_task, statuses)
        if any(not blocker.satisfiable for blocker in blockers):
            reasons = "; ".join(b.describe() for b in blockers if not b.satisfiable)  # by key
            task_transition(
                task=task,
                to=TaskStatus.BLOCKED,
                reason=f"dependency: {reasons}",
                hold=HoldReason.DEPENDENCY,
            )
        elif not blockers and _mark_due(task):
            due.append(task)
    return due


def dependents_release(*, plan: Plan, actor: Actor) -> list[Task]:
    """After a person changed how a task ended (retry, skip, cancel), look at its
    dependents again: a task blocked because a dependency ended the wrong way goes back
    to todo once no such dependency is left, and a due task whose dependencies no
    longer hold waits again. ``schedule_ready`` then marks due or blocks each of them.
    Returns the released tasks."""
    statuses = dict(plan.tasks.values_list("key", "status"))
    by_task = edges_by(plan_edges(plan))
    released = []
    for task in plan.tasks.filter(
        status=TaskStatus.BLOCKED, hold_reason=HoldReason.DEPENDENCY
    ).select_related("plan"):
        if all(b.satisfiable for b in blockers_of(task.key, by_task, statuses)):
            task_transition(task=task, to=TaskStatus.TODO, reason="dependency cleared", actor=actor)
            released.append(task)
    for task in plan.tasks.filter(status=TaskStatus.TODO, schedule__status=ScheduleStatus.DUE):
        if blockers_of(task.key, by_task, statuses):
            TaskSchedule.objects.filter(task=task, status=ScheduleStatus.DUE).update(
                status=ScheduleStatus.QUEUED, due_at=None
            )
    return released


def task_claim(*, worker: str, plan: Plan | None = None) -> Task | None:
    """Claim one due task for ``worker``, or None. Race-free between processes:
    ``skip_locked`` lets concurrent claimers pass each other's rows, and the
    conditional update proves this claimer won."""
    with transaction.atomic():
        candidates = TaskSchedule.objects.select_for_update(skip_locked=True).filter(
            status=ScheduleStatus.DUE, task__status=TaskStatus.TODO
        )
        if plan is not None:
            candidates = candidates.filter(task__plan=plan)
        schedule = candidates.order_by("due_at", "task_id").first()
        if schedule is None:
            return None
        claimed = TaskSchedule.objects.filter(pk=schedule.pk, status=ScheduleStatus.DUE).update(
            status=ScheduleStatus.CLAIMED, claimed_by=worker, claimed_at=timezone.now()
        )
        if claimed != 1:
            return None
        task = Task.objects.select_related("plan").get(pk=schedule.task_id)
        for group in task_groups(task):
            broadcast(group, "tasks.changed", task_id=task.pk)
    return task


def plan_edges(plan: Plan) -> list[Edge]:
    rows = TaskDependency.objects.filter(task__plan=plan).values_list(
        "task__key", "depends_on__key", "condition"
    )
    return [Edge(task, on, condition) for task, on, condition in rows]


def _mark_due(task: Task) -> bool:
    now = timezone.now()
    updated = TaskSchedule.objects.filter(task=task, status__in=WAITING_SCHEDULES).update(
        status=ScheduleStatus.DUE, due_at=now, enqueued_at=None
    )
    if updated:
        for group in task_groups(task):
            broadcast(group, "tasks.changed", task_id=task.pk)
    return updated == 1


def plan_verify_required(spec: PlanSpec, default_verify: list[str]) -> None:
    """``PlanInvalid`` naming every task left without a verify command."""
    missing = [
        f"tasks[{i}] ({t.key}).verify"
        for i, t in enumerate(spec.tasks)
        if not (t.verify or default_verify)
    ]
    if missing:
        raise PlanInvalid(
            "\n".join(
                f"{where}: no verify commands, and the project has no default_verify"
                for where in missing
            )
        )


def plan_best_of_check(spec: PlanSpec, cap: int) -> None:
    """Every task's best_of (its own, else the plan's) within the project's cap
    (``policy.best_of.cap``), else ``PlanInvalid`` naming each task over it."""
    over = [
        f"tasks[{i}] ({t.key}).best_of: {n} attempts is over the project's cap of {cap} "
        "(policy best_of.cap)"
        for i, t in enumerate(spec.tasks)
        if (n := t.best_of or spec.best_of or 1) > cap
    ]
    if over:
        raise PlanInvalid("\n".join(over))


def plan_tasks_create(*, plan: Plan, spec: PlanSpec, default_verify: list[str]) -> None:
    """The plan's tasks and dependencies from ``spec`` (inside the caller's transaction);
    a task without its own ``best_of`` takes the plan's."""
    tasks = Task.objects.bulk_create(
        [
            _task_from_spec(plan, position, spec_task, default_verify, spec.best_of or 1)
            for position, spec_task in enumerate(spec.tasks)
        ]
    )
    by_key = {task.key: task for task in tasks}
    TaskDependency.objects.bulk_create(
        TaskDependency(task=by_key[e.task], depends_on=by_key[e.on], condition=e.condition)
        for e in spec.edges()
    )


def policy_limits(spec: PlanSpec) -> PlanSpec:
    """``spec`` with each task's policy fields (``plan_shape.POLICY_FIELDS``, the ones a
    person's plan may set and a model's may not) at their defaults."""
    defaults = {name: TaskSpec.model_fields[name].get_default() for name in POLICY_FIELDS}
    tasks = [task.model_copy(update=defaults) for task in spec.tasks]
    return spec.model_copy(update={"tasks": tasks, "best_of": None})


def _task_from_spec(
    plan: Plan, position: int, spec: TaskSpec, default_verify: list[str], best_of: int = 1
) -> Task:
    return Task(
        plan=plan,
        position=position,
        key=spec.key,
        title=spec.title,
        description=spec.description,
        acceptance_criteria=spec.acceptance_criteria,
        verify=spec.verify or list(default_verify),
        risk_level=spec.risk_level,
        mutation_scope=spec.mutation_scope,
        task_kind=spec.task_kind,
        max_retries=spec.max_retries,
        cost_budget=spec.cost_budget,
        intent_claim=spec.intent_claim,
        best_of=spec.best_of or best_of,
    )


def plans_changed(*, session_id: int) -> None:
    """Tell the session page and both task boards (on commit) that a plan changed."""
    broadcast(Groups.session(session_id), "session.changed")
    broadcast(Groups.ALL_TASKS, "tasks.changed")
    broadcast(Groups.tasks(session_id), "tasks.changed")
