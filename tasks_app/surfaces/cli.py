"""``manage.py sf plan …`` and ``manage.py sf tasks``."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from agents_app.access import RECOVERY_ACTIONS, Action, profile_action, require_actor
from agents_app.axes import PermissionProfile
from agents_app.cli import find_session
from agents_app.models import AgentSession
from sf_core.actors import Actor
from sf_core.cli import (
    EXIT_ERROR,
    EXIT_OK,
    EXIT_USAGE,
    Subcommand,
    acting_actor,
    add_acting_user,
    add_output_format,
)
from sf_core.errors import SfError
from tasks_app.engine.recovery import RECOVERY
from tasks_app.engine.replaying import replay_run
from tasks_app.models import FINISHED_PLAN_STATUSES, Plan, PlanSource, PlanStatus, Task, TaskStatus
from tasks_app.plan_files import plan_file_read
from tasks_app.recording import unit_record
from tasks_app.selectors import plan_waves, task_board
from tasks_app.services import plan_accept, plan_create, plan_reject

RECOVERABLE_PLANS = (PlanStatus.ACCEPTED, *FINISHED_PLAN_STATUSES)


def plan_json(plan: Plan) -> dict[str, Any]:
    return {
        "id": plan.pk,
        "session": plan.session_id,
        "status": plan.status,
        "status_reason": plan.status_reason,
        "intent": plan.intent,
        "summary": plan.summary,
        "accepted_at": plan.accepted_at.isoformat() if plan.accepted_at else None,
        "waves": [[task.key for task in wave] for wave in plan_waves(plan)],
        "tasks": [
            {
                "key": task.key,
                "title": task.title,
                "status": task.status,
                "acceptance_criteria": dict(task.criteria),
                "verify": task.verify,
                "depends_on": [
                    {"task": dep.depends_on.key, "condition": dep.condition}
                    for dep in task.dependencies.all()
                ],
                "risk_level": task.risk_level,
                "mutation_scope": task.mutation_scope,
                "task_kind": task.task_kind,
                "max_retries": task.max_retries,
                "intent_claim": task.intent_claim,
            }
            for task in plan.tasks.prefetch_related("dependencies__depends_on")
        ],
    }


def find_plan(plan_id: int, actor: Actor) -> Plan:
    """The plan; with a person acting, only if they may view its project."""
    try:
        plan = Plan.objects.select_related("session__project").get(pk=plan_id)
    except Plan.DoesNotExist:
        raise SfError(f"no plan with id {plan_id}") from None
    require_actor(actor, plan.session.project, Action.VIEW)
    return plan


class PlanCommand(Subcommand):
    name = "plan"
    help = "Import, show, accept or reject plans."

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        actions = self.add_actions(
            parser,
            {
                "import": "import a plan file (YAML, JSON, Markdown)",
                "show": "print a plan with its tasks and waves",
                "accept": "accept a proposed plan",
                "reject": "reject an open plan",
            },
        )
        actions["import"].add_argument("path")
        actions["import"].add_argument("--session", type=int, required=True)
        actions["show"].add_argument("plan_id", type=int)
        accept = actions["accept"]
        accept.add_argument("plan_id", type=int)
        accept.add_argument("--autonomous", action="store_true", help="Run autonomously")
        accept.add_argument("--permission-profile", choices=PermissionProfile.values)
        actions["reject"].add_argument("plan_id", type=int)
        actions["reject"].add_argument("--reason", default="rejected from the command line")

    def run(self, options: dict[str, Any]) -> int:
        try:
            plan = getattr(self, f"_{options['action']}")(options)
        except SfError as exc:
            return self._fail(str(exc), options)
        if options["output_format"] == "json":
            self.out_json(plan_json(plan))
        else:
            self._print(plan)
        return EXIT_OK

    def _import(self, options: dict[str, Any]) -> Plan:
        actor = acting_actor(options)
        session = find_session(options["session"], actor)
        require_actor(actor, session.project, Action.STATE_INTENT)
        spec = plan_file_read(options["path"])
        return plan_create(session=session, spec=spec, source=PlanSource.FILE)

    def _show(self, options: dict[str, Any]) -> Plan:
        return find_plan(options["plan_id"], acting_actor(options))

    def _accept(self, options: dict[str, Any]) -> Plan:
        actor = acting_actor(options)
        plan = find_plan(options["plan_id"], actor)
        project, profile = plan.session.project, options["permission_profile"]
        require_actor(actor, project, Action.ACCEPT_PLAN)
        if options["autonomous"]:
            require_actor(
                actor, project, profile_action(profile or plan.session.permission_profile)
            )
        return plan_accept(
            plan=plan,
            actor=actor,
            autonomous=options["autonomous"],
            permission_profile=profile,
        )

    def _reject(self, options: dict[str, Any]) -> Plan:
        actor = acting_actor(options)
        plan = find_plan(options["plan_id"], actor)
        require_actor(actor, plan.session.project, Action.ACCEPT_PLAN)
        return plan_reject(plan=plan, reason=options["reason"])

    def _fail(self, message: str, options: dict[str, Any]) -> int:
        if options["output_format"] == "json":
            self.out_json({"ok": False, "errors": message.splitlines()})
        else:
            self.err("error: " + message.replace("\n", "\n  "))
        return EXIT_USAGE

    def _print(self, plan: Plan) -> None:
        self.out(f"plan {plan.pk} ({plan.status}) for session {plan.session_id}: {plan.summary}")
        for number, wave in enumerate(plan_waves(plan), 1):
            self.out(f"  wave {number}: {', '.join(task.key for task in wave)}")
        for task in plan.tasks.all():
            detail = f"risk {task.risk_level}, {task.mutation_scope}"
            self.out(f"  [{task.status}] {task.key}: {task.title} ({detail})")
            for criterion, text in task.criteria:
                self.out(f"      {criterion} {text}")
            for command in task.verify:
                self.out(f"      verify: {command}")


class TasksCommand(Subcommand):
    name = "tasks"
    help = (
        "The task board: lifecycle, runtime, blockers, retries, budget, next action; "
        "retry, resume, stop (after its step), cancel or skip a task."
    )

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        # Not required here: ``tasks retry KEY --session N`` gives it to the subparser.
        parser.add_argument("--session", type=int)
        parser.add_argument("--status", action="append", choices=TaskStatus.values, default=[])
        add_output_format(parser)
        add_acting_user(parser)
        actions = parser.add_subparsers(dest="action", required=False)
        for action in RECOVERY:
            act = actions.add_parser(action, help=f"{action} a task (by key) of the session")
            act.add_argument("key")
            act.add_argument("--session", type=int, required=True, dest="session")
            act.add_argument("--reason", default="")
            add_acting_user(act)

    def run(self, options: dict[str, Any]) -> int:
        try:
            if options.get("session") is None:
                raise SfError("--session N is required")
            actor = acting_actor(options)
            session = find_session(options["session"], actor)
            if options.get("action"):
                return self._recover(session, actor, options)
        except SfError as exc:
            self.err(f"error: {exc}")
            return EXIT_USAGE
        return self._board(session.pk, options)

    def _recover(self, session: AgentSession, actor: Actor, options: dict[str, Any]) -> int:
        """``sf tasks retry|resume|stop|cancel|skip KEY --session N``: one service call."""
        require_actor(actor, session.project, RECOVERY_ACTIONS[options["action"]])
        task = find_task(session.pk, options["key"])
        task = RECOVERY[options["action"]](task=task, actor=actor, reason=options["reason"])
        self.out(f"{task.key}: {task.status} ({task.status_reason})")
        return EXIT_OK

    def _board(self, session_id: int, options: dict[str, Any]) -> int:
        board = task_board(session_id=session_id, statuses=options["status"])
        if options["output_format"] == "json":
            self.out_json({"session": session_id, **board.as_json()})
            return EXIT_OK
        for row in board.rows:
            task = row.task
            budget = f"${task.cost_spent}" + (
                f"/${task.cost_budget}" if task.cost_budget is not None else ""
            )
            self.out(
                f"{task.key:<20} {task.status:<12} {row.schedule_status:<10} "
                f"retries {row.retries:<5} {budget:<16} {row.next_action}"
            )
        counts = ", ".join(f"{n} {s}" for s, n in sorted(board.counts.items())) or "no tasks"
        self.out(
            f"-- {len(board.rows)} shown ({counts}); workers {board.workers_online}; "
            f"cost ${board.total_cost}"
        )
        for warning in board.warnings:
            self.out(f"!! overlapping intent claims: {warning}")
        for warning in board.merge_warnings:
            self.out(f"!! may conflict when merged: {warning}")
        return EXIT_OK


def find_task(session_id: int, key: str) -> Task:
    """The task ``key`` of the session's most recent accepted or finished plan."""
    tasks = Task.objects.select_related("plan").filter(
        plan__session_id=session_id, key=key, plan__status__in=RECOVERABLE_PLANS
    )
    task = tasks.order_by("-plan__created_at", "-plan_id").first()
    if task is None:
        raise SfError(f"no task {key!r} in an accepted plan of session {session_id}")
    return task


class ReplayCommand(Subcommand):
    name = "replay"
    help = "Re-run a recorded unit from its trace, on a project repository (no live model)."

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "trace", help="a trace file (JSON Lines), e.g. examples/demo-trace.jsonl"
        )
        parser.add_argument(
            "--project", required=True, help="path of the git repository to work on"
        )
        add_output_format(parser)

    def run(self, options: dict[str, Any]) -> int:
        try:
            result = replay_run(Path(options["trace"]), project_path=Path(options["project"]))
        except SfError as exc:
            self.err(f"error: {exc}")
            return EXIT_USAGE
        tasks = result.tasks()
        done = all(task.status == TaskStatus.DONE for task in tasks)
        if options["output_format"] == "json":
            self.out_json(
                {
                    "ok": done,
                    "session": result.session.pk,
                    "plan": result.plan.pk,
                    "units": result.units,
                    "tasks": [
                        {"key": t.key, "status": t.status, "reason": t.status_reason} for t in tasks
                    ],
                }
            )
        else:
            for task in tasks:
                self.out(f"{task.key}: {task.status} ({task.status_reason})")
            self.out(f"session {result.session.pk}: {result.units} unit(s) replayed")
        return EXIT_OK if done else EXIT_ERROR


class RecordCommand(Subcommand):
    name = "record"
    help = "Export a unit that ran against a live model as a replayable trace."

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("unit", type=int, help="the unit's id (on its page: /units/ID/)")
        parser.add_argument(
            "--out", required=True, help="where to write the trace (JSON Lines), e.g. t.jsonl"
        )

    def run(self, options: dict[str, Any]) -> int:
        try:
            path = unit_record(unit_id=options["unit"], path=Path(options["out"]))
        except SfError as exc:
            self.err(f"error: {exc}")
            return EXIT_USAGE
        self.out(f"wrote {path}: replay it with sf replay {path} --project PATH")
        return EXIT_OK


SUBCOMMANDS: list[type[Subcommand]] = [
    PlanCommand,
    TasksCommand,
    ReplayCommand,
    RecordCommand,
]
