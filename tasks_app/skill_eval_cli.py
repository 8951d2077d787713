"""``manage.py sf skill-eval``: run a project's skill eval cases, print the results.

It lives above the engine (tasks_app), not beside ``sf skills`` (skills_app is below
the engine it needs). The last line of output is always the JSON of the runs; the exit
code is 0 when every trial passed, 1 when one failed, 2 for a usage error.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from agents_app.access import Action, require_actor
from agents_app.axes import ModelMode
from agents_app.runtime.llm import model_for
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
from skills_app.cli import find_project
from skills_app.models import SkillEvalRun
from tasks_app.skill_evals import EvalOptions, EvalUsage, eval_cases, eval_run


def run_as_dict(run: SkillEvalRun) -> dict[str, Any]:
    return {
        "skill": run.case.skill.name,
        "case": run.case.name,
        "passed": run.passed,
        "grades": run.grades,
        "error": run.error,
        "model_mode": run.model_mode,
        "model": run.model,
        "replay": run.replay,
        "duration_s": run.duration_s,
        "cost": float(run.cost),
        "workspace": run.workspace_path,
        "run_id": run.pk,
    }


class SkillEvalCommand(Subcommand):
    name = "skill-eval"
    help = "Run skill eval cases as real units (live, or replayed from traces) and grade them."

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("skill", nargs="?", default="", help="one skill (default: all)")
        parser.add_argument("--project", required=True, help="project name or id")
        parser.add_argument("--case", default="", help="one case of the skill")
        parser.add_argument(
            "--model-mode",
            default=ModelMode.SMART.value,
            choices=ModelMode.values,
            help="the live model's mode (SF_MODEL_<MODE>); ignored with --replay",
        )
        parser.add_argument(
            "--replay",
            nargs="?",
            const="",
            default=None,
            metavar="TRACE",
            help="answer from a trace: TRACE for one case, or each case's own trace.jsonl",
        )
        add_output_format(parser)
        add_acting_user(parser)

    def run(self, options: dict[str, Any]) -> int:
        try:
            project = find_project(options["project"])
            require_actor(acting_actor(options), project, Action.CREATE_SESSION)
            eval_options = self._options(options)
            cases = eval_cases(project, skill=options["skill"], case=options["case"])
            if eval_options.replay is not None and len(cases) != 1:
                raise EvalUsage(
                    f"--replay TRACE answers one case; {len(cases)} selected "
                    "(name the skill and --case, or give --replay alone for each case's own)"
                )
            runs = [eval_run(case, options=eval_options) for case in cases]
        except EvalUsage as exc:
            self.err(f"error: {exc}")
            return EXIT_USAGE
        except SfError as exc:
            self.err(f"error: {exc}")
            return EXIT_USAGE
        rows = [run_as_dict(run) for run in runs]
        if options["output_format"] != "json":
            for row in rows:
                verdict = "PASS" if row["passed"] else "FAIL"
                kept = f" (kept: {row['workspace']})" if row["workspace"] else ""
                self.out(f"{verdict} {row['skill']}/{row['case']}{kept} {row['error']}".rstrip())
        self.out_json({"passed": all(row["passed"] for row in rows), "runs": rows})
        return EXIT_OK if all(row["passed"] for row in rows) else EXIT_ERROR

    def _options(self, options: dict[str, Any]) -> EvalOptions:
        replay = options["replay"]
        if replay is None:
            model_for(options["model_mode"], None)  # a live run needs its model: fail now
            return EvalOptions(model_mode=options["model_mode"])
        if replay and not Path(replay).is_file():
            raise EvalUsage(f"--replay {replay}: no such file")
        return EvalOptions(
            model_mode=options["model_mode"],
            replay=Path(replay) if replay else None,
            replay_own=not replay,
        )


SUBCOMMANDS: list[type[Subcommand]] = [SkillEvalCommand]
