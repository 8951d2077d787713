"""``manage.py sf schedules list | show | create | pause | resume | delete | run-now | sweep``."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from agents_app.access import Action, require_actor
from agents_app.models import Project
from sf_core.actors import Actor
from sf_core.cli import (
    EXIT_OK,
    EXIT_USAGE,
    Subcommand,
    acting_actor,
)
from sf_core.errors import SfError
from tasks_app.features.schedules.runner import schedules_sweep
from tasks_app.features.schedules.selectors import project_schedules, schedule_runs
from tasks_app.features.schedules.services import (
    schedule_create,
    schedule_delete,
    schedule_run_now,
    schedule_set_paused,
)
from tasks_app.features.schedules.spec import MODEL_MODES, PROFILES, RUN_CONTROLS, spec_parse
from tasks_app.features.schedules.timing import local_text
from tasks_app.models import Schedule, ScheduleRun

FORMATS = {"yml": "yaml", "markdown": "md"}
ONE_SCHEDULE = ("show", "pause", "resume", "delete", "run-now")


def schedule_json(schedule: Schedule) -> dict[str, Any]:
    zone = ZoneInfo(schedule.timezone)
    return {
        "id": schedule.pk,
        "project": schedule.project_id,
        "name": schedule.name,
        "kind": schedule.kind,
        "cron": schedule.cron,
        "timezone": schedule.timezone,
        "run_control": schedule.run_control,
        "permission_profile": schedule.permission_profile,
        "model_mode": schedule.model_mode,
        "catch_up_window_s": int(schedule.catch_up_window.total_seconds()),
        "paused": schedule.paused,
        "run_as": schedule.run_as.get_username() if schedule.run_as else None,
        "next_run_at": None if schedule.paused else schedule.next_run_at.isoformat(),
        "next_run_local": None if schedule.paused else local_text(schedule.next_run_at, zone),
    }


def run_json(run: ScheduleRun) -> dict[str, Any]:
    return {
        "id": run.pk,
        "occurrence": run.occurrence.isoformat(),
        "occurrences": run.occurrences,
        "trigger": run.trigger,
        "status": run.status,
        "reason": run.reason,
        "session": run.session_id,
        "plan": run.plan_id,
    }


class SchedulesCommand(Subcommand):
    name = "schedules"
    help = "List, create, pause, resume, delete or run schedules; run one sweep."

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        actions = self.add_actions(
            parser,
            {
                "list": "a project's schedules and their next runs",
                "create": "a new schedule (an intent or a plan file)",
                **{name: f"{name} a schedule" for name in ONE_SCHEDULE},
                "sweep": "run due schedules now (embedded mode, cron)",
            },
        )
        actions["list"].add_argument("--project", type=int, required=True)
        self._create_arguments(actions["create"])
        for name in ONE_SCHEDULE:
            actions[name].add_argument("schedule_id", type=int)

    @staticmethod
    def _create_arguments(create: argparse.ArgumentParser) -> None:
        create.add_argument("--project", type=int, required=True)
        create.add_argument("--name", required=True)
        what = create.add_mutually_exclusive_group(required=True)
        what.add_argument("--intent", help="the intent a new session plans each time")
        what.add_argument("--plan-file", help="a plan file (.yaml, .json, .md) imported each time")
        create.add_argument("--cron", required=True, help="five fields, e.g. '30 2 * * *'")
        create.add_argument("--timezone", required=True, help="IANA name, e.g. Europe/Berlin")
        create.add_argument("--run-control", choices=RUN_CONTROLS)
        create.add_argument("--permission-profile", choices=PROFILES)
        create.add_argument("--model-mode", choices=MODEL_MODES)
        create.add_argument("--catch-up-window", help="e.g. 30m, 6h (default 1h)")
        create.add_argument("--run-as", help="the user its runs act as (default: --as)")

    def run(self, options: dict[str, Any]) -> int:
        action = options["action"].replace("-", "_")
        try:
            actor = acting_actor(options)
            result = getattr(self, f"_{action}")(options, actor)
        except SfError as exc:
            self.err(f"error: {exc}")
            return EXIT_USAGE
        if options["output_format"] == "json":
            self.out_json(result)
        else:
            self._print(result)
        return EXIT_OK

    def _print(self, result: Any) -> None:
        rows = result if isinstance(result, list) else [result]
        for row in rows:
            if "cron" in row:
                when = row["next_run_local"] or "paused"
                self.out(
                    f"{row['id']}  {row['name']}  {row['cron']} {row['timezone']}  next {when}"
                )
            elif "occurrence" in row:
                self.out(
                    f"  run {row['id']}  {row['occurrence']}  {row['status']}  {row['reason']}"
                )
            else:
                self.out("  ".join(f"{key} {value}" for key, value in sorted(row.items())))

    def _list(self, options: dict[str, Any], actor: Actor) -> list[dict[str, Any]]:
        project = self._project(options["project"], actor)
        return [schedule_json(row.schedule) for row in project_schedules(project=project)]

    def _create(self, options: dict[str, Any], actor: Actor) -> dict[str, Any]:
        project = self._project(options["project"], actor)
        data: dict[str, Any] = {"name": options["name"], "cron": options["cron"]}
        data["timezone"] = options["timezone"]
        if options["plan_file"]:
            path = Path(options["plan_file"])
            if not path.is_file():
                raise SfError(f"--plan-file: no file {path}")
            suffix = path.suffix.lstrip(".").lower()
            data |= {"kind": "plan", "plan_format": FORMATS.get(suffix, suffix)}
            data["plan_text"] = path.read_text()
        else:
            data |= {"kind": "intent", "intent": options["intent"]}
        for field in ("run_control", "permission_profile", "model_mode", "catch_up_window"):
            if options.get(field):
                data[field] = options[field]
        data["run_as"] = options.get("run_as") or ""
        schedule = schedule_create(project=project, spec=spec_parse(data), actor=actor)
        return schedule_json(schedule)

    def _show(self, options: dict[str, Any], actor: Actor) -> list[dict[str, Any]]:
        schedule = self._schedule(options["schedule_id"], actor)
        return [schedule_json(schedule), *(run_json(r) for r in schedule_runs(schedule=schedule))]

    def _pause(self, options: dict[str, Any], actor: Actor) -> dict[str, Any]:
        schedule = self._schedule(options["schedule_id"], actor)
        return schedule_json(schedule_set_paused(schedule=schedule, paused=True, actor=actor))

    def _resume(self, options: dict[str, Any], actor: Actor) -> dict[str, Any]:
        schedule = self._schedule(options["schedule_id"], actor)
        return schedule_json(schedule_set_paused(schedule=schedule, paused=False, actor=actor))

    def _delete(self, options: dict[str, Any], actor: Actor) -> dict[str, Any]:
        schedule = self._schedule(options["schedule_id"], actor)
        schedule_delete(schedule=schedule, actor=actor)
        return {"deleted": options["schedule_id"]}

    def _run_now(self, options: dict[str, Any], actor: Actor) -> dict[str, Any]:
        schedule = self._schedule(options["schedule_id"], actor)
        return run_json(schedule_run_now(schedule=schedule, actor=actor))

    def _sweep(self, options: dict[str, Any], actor: Actor) -> dict[str, Any]:
        if actor.user is not None:  # a sweep runs every project's schedules
            raise SfError("sf schedules sweep runs as SF itself; leave out --as and SF_USER")
        return schedules_sweep()

    @staticmethod
    def _project(project_id: int, actor: Actor) -> Project:
        project = Project.objects.filter(pk=project_id).first()
        if project is None:
            raise SfError(f"no project with id {project_id}")
        require_actor(actor, project, Action.VIEW)
        return project

    @staticmethod
    def _schedule(schedule_id: int, actor: Actor) -> Schedule:
        schedule = Schedule.objects.select_related("project", "run_as").filter(pk=schedule_id)
        found = schedule.first()
        if found is None:
            raise SfError(f"no schedule with id {schedule_id}")
        require_actor(actor, found.project, Action.VIEW)
        return found


SUBCOMMANDS: list[type[Subcommand]] = [SchedulesCommand]
