"""One unit: one attempt at one task by a fresh agent session (DESIGN §4).

``unit_run`` is the engine's single entry point for a unit. The Celery task
``tasks_app.unit_run`` (``tasks_app/tasks.py``) calls it on workers; headless and the
embedded default call it inline through ``drain.drain``. It claims the task's
schedule row first (a conditional update: a duplicate or late delivery returns at
once), then works in the task's git worktree, runs the agent loop, the verification
gate, and hands the task to review or retry.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from decimal import Decimal
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import DatabaseError, transaction
from django.db.models import F
from django.utils import timezone

from agents_app.axes import RunControl, WorkMode
from agents_app.gate.session import SessionGate
from agents_app.models import Activity, AgentSession, PauseCause, SessionDriver, SessionStatus
from agents_app.runtime.llm import ModelRouter, model_settings_for
from agents_app.runtime.loop import AgentLoop, LoopResult
from agents_app.runtime.model_settings import PromptProfile
from agents_app.runtime.replay import replay_activate, replay_deactivate
from agents_app.runtime.sandbox import SandboxPolicy, policy_for
from agents_app.runtime.tools import COMPACT_TOOLS, REPAIR_TOOLS, TOOLS, Tool, ToolContext
from agents_app.runtime.trace import TraceRecorder
from agents_app.services import DispatchPoint, session_apply_due, session_set_paused
from agents_app.services.budget import budget_pause, budget_remaining
from sf_core.actors import Actor
from sf_core.errors import SfError
from sf_core.live import broadcast
from skills_app.loader import SkillLoader
from tasks_app.engine.attempts import Agent, round_run
from tasks_app.engine.environment import worktree_prepare
from tasks_app.engine.followups import followups_brief
from tasks_app.engine.hooks import EngineHooks, Heartbeat
from tasks_app.engine.instructions import unit_instructions
from tasks_app.engine.mcp import unit_mcp_servers
from tasks_app.engine.model_calls import streamed as _streamed
from tasks_app.engine.model_calls import with_idle_timeout as _with_idle_timeout
from tasks_app.engine.outcome import unit_complete, unit_fail
from tasks_app.engine.project_hooks import unit_loop_started
from tasks_app.engine.prompts import unit_messages
from tasks_app.engine.record import unit_sync
from tasks_app.engine.reservations import (
    budget_more,
    round_shortfall,
    unit_budget,
    unit_reservation,
    unit_settle,
)
from tasks_app.engine.resuming import resumption_of, resumption_record
from tasks_app.engine.skills import skill_loader, skills_section
from tasks_app.engine.stopping import StopWatch
from tasks_app.engine.system_faults import SYSTEM_FAULTS, unit_system_fault
from tasks_app.engine.values import UnitOptions, UnitReport
from tasks_app.engine.worktrees import worktree_ensure
from tasks_app.lifecycle import task_groups, task_transition
from tasks_app.models import (
    HoldReason,
    ScheduleStatus,
    Task,
    TaskRuntime,
    TaskSchedule,
    TaskStatus,
    Unit,
)
from tasks_app.replays import unit_replay
from tasks_app.workspaces import Workspace, workspace_of

# The options and the report are defined in ``values`` (``outcome`` builds the report
# without importing this module); callers take them from here with ``unit_run``.
__all__ = ["UnitOptions", "UnitReport", "unit_gate", "unit_run"]
logger = logging.getLogger("sf.engine")
RUNNABLE = (TaskStatus.TODO, TaskStatus.RETRYING)


def unit_run(*, task_id: int, worker: str, options: UnitOptions | None = None) -> UnitReport | None:
    """Run one unit of ``task_id``, or return None when it is not ours to run."""
    options = options or UnitOptions()
    started = _start(task_id, worker)
    if started is None:
        return None
    task, unit, ws = started
    try:
        # Beating from the claim to the end: creating a large worktree, the verify
        # commands (a test suite may run for minutes) and the review all take longer
        # than SF_WORKER_STALE_AFTER, and a silent unit is taken for a dead one.
        # The heartbeat thread also watches for a person's stop of this unit (a Cancel
        # cuts the model's answer at once: ``stopping``).
        watch = StopWatch(task.pk)
        with Heartbeat(task.pk, beat_now=False, watch=watch):  # _start wrote the first beat
            unit_sync(ws)  # record mode: this host's mirror fetched (engine.record)
            worktree_ensure(ws)
            if task.best_of > 1:  # N attempts at once, the best kept (``attempts``)
                agent = _attempts_agent(options, unit.attempt, task.best_of)
                return round_run(
                    task=task, first=unit, ws=ws, options=options, agent=agent, watch=watch
                )
            hooks = EngineHooks(session_id=task.plan.session_id, task=task, watch=watch)
            blocked, resources = worktree_prepare(task=task, unit=unit, ws=ws)
            result = blocked or _agent(task, unit, ws, options, hooks, resources)
            cause, stop = hooks.cause, watch.request
            return unit_complete(
                task=task, unit=unit, ws=ws, result=result, cause=cause, stop=stop, options=options
            )
    except SYSTEM_FAULTS as exc:  # the disk, git under SF, the database: not the agent's
        return unit_system_fault(task=task, unit=unit, error=exc)
    except SfError as exc:
        logger.warning("unit %s of %s failed: %s", unit.attempt, task.key, exc)
        return unit_fail(task=task, unit=unit, ws=ws, error=exc)
    finally:
        _settle_and_release(task, unit)


def _start(task_id: int, worker: str) -> tuple[Task, Unit, Workspace] | None:
    with transaction.atomic():
        schedule = TaskSchedule.objects.select_for_update().filter(task_id=task_id).first()
        if schedule is None or not _may_take(schedule, worker):
            return None
        task = Task.objects.select_related("plan__session__project").get(pk=task_id)
        session = AgentSession.objects.select_for_update().get(pk=task.plan.session_id)
        if task.status not in (*RUNNABLE, TaskStatus.IN_PROGRESS):
            return None
        if _backing_off(schedule) or not _session_may_run(session):
            # This delivery is used up: the task waits unsent, and is sent again when
            # it is due and its session runs (``dispatch``).
            TaskSchedule.objects.filter(pk=schedule.pk).update(enqueued_at=None)
            return None
        reserved = _reserve(task, session, worker)
        if reserved is None:
            return None
        _count_continue(session)
        session_apply_due(session=session, point=DispatchPoint.BEFORE_UNIT)
        session.refresh_from_db()
        if task.status != TaskStatus.IN_PROGRESS:  # in_progress: a crashed unit's task resumes
            task_transition(
                task=task,
                to=TaskStatus.IN_PROGRESS,
                reason="unit started",
                actor=Actor.system(worker),
            )
        now = timezone.now()
        TaskSchedule.objects.filter(pk=schedule.pk).update(
            status=ScheduleStatus.DISPATCHED,
            claimed_by=worker,
            claimed_at=schedule.claimed_at or now,
            dispatched_at=now,
        )
        attempt = Unit.objects.filter(task=task).count() + 1
        unit = Unit.objects.create(task=task, attempt=attempt, cost_reserved=reserved)
        ws = workspace_of(task)
        TaskRuntime.objects.update_or_create(
            task=task,
            defaults={
                "worker": worker,
                "pid": os.getpid(),
                "worktree_path": str(ws.path),
                "current_model": "",
                "last_heartbeat_at": now,
            },
        )
        AgentSession.objects.filter(pk=session.pk).update(
            activity=Activity.UNIT, interrupt_requested=False
        )
        session.project = task.plan.session.project  # read above (select_related)
        task.plan.session = session
    return task, unit, ws


def _may_take(schedule: TaskSchedule, worker: str) -> bool:
    """A due task, or one claimed for this worker. A dispatched task is someone's."""
    if schedule.status == ScheduleStatus.DUE:
        return True
    return schedule.status == ScheduleStatus.CLAIMED and schedule.claimed_by in ("", worker)


def _backing_off(schedule: TaskSchedule) -> bool:
    """Due later: its task waits after system faults in a row (``system_faults``)."""
    return schedule.due_at is not None and schedule.due_at > timezone.now()


def _session_may_run(session: AgentSession) -> bool:
    """Paused, stopped, over budget or over the continuation limit: not now."""
    if session.status != SessionStatus.ACTIVE or session.paused:
        return False
    if _stopped(session):
        return False
    remaining = budget_remaining(session)
    if remaining is not None and remaining <= 0:
        budget_pause(session)
        return False
    limited = session.run_control == RunControl.AUTONOMOUS
    if limited and session.autonomous_continues >= session.max_autonomous_continues:
        session_set_paused(
            session=session,
            paused=True,
            actor=Actor.system("limit"),
            cause=PauseCause.LIMIT,
            reason=f"continuation limit reached ({session.max_autonomous_continues} units)",
        )
        return False
    return True


def _count_continue(session: AgentSession) -> None:
    """An autonomous unit starting counts against the continuation limit."""
    if session.run_control == RunControl.AUTONOMOUS:
        AgentSession.objects.filter(pk=session.pk).update(
            autonomous_continues=F("autonomous_continues") + 1
        )


def _reserve(task: Task, session: AgentSession, worker: str) -> Decimal | None:
    """The unit's reservation (a best-of-N round's: all its attempts'), or None: held
    for budget while other units hold the rest, or paused for a person with the figures
    when the budget could never cover the round's N attempts (``round_shortfall``)."""
    short = round_shortfall(task, session)
    if short:
        actor, hold = Actor.system(worker), HoldReason.PERSON  # not lifted by the engine
        task_transition(task=task, to=TaskStatus.PAUSED, reason=short, actor=actor, hold=hold)
        TaskSchedule.objects.filter(task=task).update(
            status=ScheduleStatus.CONSUMED, consumed_at=timezone.now(), enqueued_at=None
        )
        return None
    reserved = unit_reservation(task, session)
    if reserved is None:
        _hold_for_budget(task, session, worker)
    return reserved


def _hold_for_budget(task: Task, session: AgentSession, worker: str) -> None:
    """Other units hold what is left of the budget: the task waits budget-paused (an
    engine hold: the next dispatch, after a unit settles, puts it back to todo)."""
    left = (session.cost_budget or 0) - session.cost_spent
    task_transition(
        task=task,
        to=TaskStatus.PAUSED,
        reason=f"budget: ${session.cost_reserved} of the ${left} left is reserved by running units",
        actor=Actor.system(worker),
        hold=HoldReason.BUDGET,
    )


def _stopped(session: AgentSession) -> bool:
    """Workers start nothing of a manual session but a /next step: a unit sent before
    /stop (or a switch to manual) stays due. An inline driver (``sf headless next``)
    steps a manual session itself."""
    return (
        session.run_control == RunControl.MANUAL
        and session.driver == SessionDriver.WORKERS
        and not session.step_requested
    )


def _attempts_agent(options: UnitOptions, first: int, count: int) -> Agent:
    """A round's agent. Replaying, each attempt answers from its own recorded unit
    (``Replay.units_split``): the attempts run at once, and a shared cursor would give
    one attempt the steps of another."""
    parts = options.replay.units_split(count) if options.replay is not None else None
    if parts is None:
        return _agent

    def agent(
        task: Task,
        unit: Unit,
        ws: Workspace,
        chosen: UnitOptions,
        hooks: EngineHooks,
        resources: dict[str, str],
    ) -> LoopResult:
        own = replace(chosen, replay=parts[unit.attempt - first])
        return _agent(task, unit, ws, own, hooks, resources)

    return agent


def _agent(
    task: Task,
    unit: Unit,
    ws: Workspace,
    options: UnitOptions,
    hooks: EngineHooks,
    resources: dict[str, str],
) -> LoopResult:
    session = AgentSession.objects.select_related("project").get(pk=task.plan.session_id)
    if options.replay is None and session.replay_trace:
        options = replace(options, replay=unit_replay(session.replay_trace))
    skills = skill_loader(session, ws, unit)
    recorder = TraceRecorder(session=session, unit_id=unit.pk)
    # The unit's MCP servers run as long as its loop and are stopped however it ends.
    with unit_mcp_servers(
        session=session, skills=skills, worktree=ws.path, recorder=recorder
    ) as mcp:
        router = _router(session, options, unit.pk, hooks)
        try:
            loop = AgentLoop(
                router=router,
                tools=_tools(skills, session.work_mode, mcp.tools, router.prompt_profile),
                context=ToolContext(
                    worktree=ws.path,
                    skills=skills,
                    answers=options.answers,
                    sandbox=_sandbox_policy(session.pk),
                    env=resources,
                ),
                gate=unit_gate(session, unit, ws.path, hooks, skills.profiles(), mcp.risks),
                recorder=recorder,
                hooks=hooks,
                max_steps=settings.SF_UNIT_MAX_STEPS,
                budget=unit_budget(task, session, Unit.objects.get(pk=unit.pk).cost_reserved),
                budget_more=budget_more(task, unit.pk) if session.cost_budget is not None else None,
                replay=options.replay,
            )
            instructions = unit_instructions(
                task=task, worktree=ws.path, router=router, recorder=recorder, replay=options.replay
            )
            extras = (mcp.prompt_section(session.permission_profile), instructions)
            # A replay resumes where its recording did, and only there.
            replaying = options.replay is not None and not options.replay.resumes()
            resumed = None if replaying else resumption_of(task, unit)
            # A resumed conversation is the one that waited: people's follow-ups reach
            # it before its next step (the hooks), not in a brief it never reads.
            messages = _messages(task, unit, skills, router, extras, recorder, resumed is None)
            if resumed is not None:  # an approved call: go on from where it waited
                messages, loop.pending = resumed.messages, resumed.calls
                resumption_record(resumed, recorder)
            # From here on, people's follow-ups and the project's hooks reach the model.
            unit_loop_started(loop, hooks, session, unit, recorder)
            # Setting up (the worktree's environment, skills, MCP servers, the model's
            # first import) is not the model being silent: the idle timeout counts from
            # the loop's start.
            hooks.last_progress = time.monotonic()
            return loop.run(messages)
        finally:
            if options.replay:
                replay_deactivate(options.replay)


def unit_gate(
    session: AgentSession,
    unit: Unit,
    worktree: Path,
    hooks: EngineHooks,
    skill_profiles: dict[str, str],
    mcp_tools: dict[str, str],
) -> SessionGate:
    """The unit's gate, deciding on the hooks' reading of the session at each dispatch
    point, which its calls reuse while the gate finds it current (``reuse_readings``)."""
    gate = SessionGate(
        session_id=session.pk,
        worktree=worktree,
        unit_id=unit.pk,
        skill_profiles=skill_profiles,
        mcp_tools=mcp_tools,
        source=hooks.current_session,
        on_stale=hooks.forget,
        activity=Activity.TOOL,
    )
    hooks.reuse_readings = gate.validates_readings
    return gate


def _messages(
    task: Task,
    unit: Unit,
    skills: SkillLoader,
    router: ModelRouter,
    sections: tuple[str, str],
    recorder: TraceRecorder,
    with_followups: bool = True,
) -> list[dict[str, Any]]:
    """The unit's first messages (and its model, recorded on the unit and the runtime);
    ``sections``: the MCP servers' and the repository's instructions; with the
    follow-ups people sent since the last unit (now delivered, traced) unless
    ``with_followups`` is off (they wait for the loop's next step)."""
    mcp_section, instructions = sections
    earlier = Unit.objects.filter(task=task, attempt__lt=unit.attempt)
    if unit.round_id is not None:  # a best-of-N attempt: its round's others run beside it
        earlier = earlier.exclude(round_id=unit.round_id)
    previous = earlier.order_by("-attempt").first()
    with transaction.atomic():  # one commit, not two
        Unit.objects.filter(pk=unit.pk).update(model=router.model)
        TaskRuntime.objects.filter(task=task).update(current_model=router.model)
    extras = "\n\n".join(
        part for part in (skills_section(skills, task, router), mcp_section) if part
    )
    compact = router.prompt_profile == PromptProfile.COMPACT
    followups = (
        followups_brief(task_id=task.pk, unit_id=unit.pk, recorder=recorder)
        if with_followups
        else ""
    )
    return unit_messages(
        task=task,
        skills=extras,
        previous=previous,
        compact=compact,
        instructions=instructions,
        followups=followups,
    )


def _router(
    session: AgentSession, options: UnitOptions, unit_id: int, hooks: EngineHooks
) -> ModelRouter:
    """The mode's model with its endpoint and tool-call style (a project's model settings
    override the environment's), and the fallback; a replay has neither. A live model is
    asked streamed, what it writes shown on the unit page as it comes."""
    if options.replay:
        completion = options.completion or _with_idle_timeout
        return ModelRouter(model=replay_activate(options.replay), completion=completion)
    deadline = hooks.started + settings.SF_UNIT_HARD_TIMEOUT.total_seconds()
    cut = hooks.watch.cut if hooks.watch is not None else None
    completion = options.completion or _streamed(hooks.task.pk, unit_id, deadline, cut)
    project_models = session.project.parsed_policy.models
    mode = options.model_mode or session.model_mode
    chosen = model_settings_for(mode, options.model, project_models)
    if options.temperature is not None:  # a best-of-N attempt's variant
        chosen = replace(chosen, temperature=options.temperature)
    fallback = model_settings_for("fallback", None, project_models)
    return ModelRouter.from_settings(
        chosen,
        fallback if fallback.model else None,
        completion=completion,
        prices=session.project.parsed_policy.prices,
    )


def _tools(
    skills: SkillLoader,
    work_mode: str,
    mcp_tools: Mapping[str, Tool],
    profile: PromptProfile = PromptProfile.FULL,
) -> dict[str, Tool]:
    """No skill to load, no load_skill: a small model offered it calls it with names it
    makes up (seen with Qwen2.5-Coder-1.5B: load_skill("add_shout_flag")). In repair
    work mode, only ``REPAIR_TOOLS`` (no writes, no MCP tools); with the compact prompt
    profile, only ``COMPACT_TOOLS`` and the project's MCP tools."""
    tools = TOOLS if skills.offered() else {n: t for n, t in TOOLS.items() if n != "load_skill"}
    if work_mode == WorkMode.REPAIR:
        return {name: tool for name, tool in tools.items() if name in REPAIR_TOOLS}
    if profile == PromptProfile.COMPACT:
        tools = {name: tool for name, tool in tools.items() if name in COMPACT_TOOLS}
    return {**tools, **mcp_tools}


def _sandbox_policy(session_id: int) -> Callable[[], SandboxPolicy]:
    """Read when each command runs: the profile may have been changed by steering."""

    def policy() -> SandboxPolicy:
        session = AgentSession.objects.select_related("project").get(pk=session_id)
        parsed = session.project.parsed_policy
        return policy_for(session.permission_profile, parsed.egress, parsed.sandbox)

    return policy


def _settle_and_release(task: Task, unit: Unit) -> None:
    """The unit's reservation is settled (a no-op once settled) and its runtime state,
    ephemeral, goes with it; the session is idle again. With the database unreachable
    this is left to the sweep, which recovers a unit by its stale heartbeat: an error
    here must not hide how the unit ended."""
    try:
        unit_settle(unit_id=unit.pk, session_id=task.plan.session_id)
        with transaction.atomic():  # one commit, not two
            TaskRuntime.objects.filter(task=task).delete()
            AgentSession.objects.filter(pk=task.plan.session_id).update(activity=Activity.IDLE)
            # The board's row showed the runtime (worker, heartbeat): it goes now, and
            # an open board must not keep it until some other change comes.
            for group in task_groups(task):
                broadcast(group, "tasks.changed", task_id=task.pk)
    except DatabaseError:
        logger.warning("unit %s of %s: not released (database)", unit.attempt, task.key)
