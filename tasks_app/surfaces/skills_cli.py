"""``manage.py sf skills sync|list|eval``: a project's skills at the shell.

``sync`` reads the skill folders into the database now (exit 1 when one is invalid),
``list`` shows what a unit of the project may use, ``eval`` runs eval cases as real
units (live, or replayed from traces) and grades them: its last line of output is
always the JSON of the runs; exit 0 when every trial passed, 1 when one failed or
could not run, 2 for a usage error. The command lives above the engine (tasks_app)
because ``eval`` runs units.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from agents_app.access import Action, projects_visible, require_actor
from agents_app.axes import ModelMode
from agents_app.cli import find_project
from agents_app.models import Project
from agents_app.runtime.llm import model_for
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
from skills_app.loader import model_may_see, skills_available
from skills_app.models import SkillEvalRun, SkillProposal
from skills_app.sync import skills_sync
from tasks_app.features.skills.evals import EvalOptions, EvalUsage, eval_cases, eval_run
from tasks_app.features.skills.proposals import proposal_accept, proposal_reject, skill_proposals
from tasks_app.models.evidence import proposal_task

ACTION_NEEDS = {"sync": Action.SYNC_SKILLS, "list": Action.VIEW, "eval": Action.CREATE_SESSION}


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


def proposal_json(proposal: SkillProposal) -> dict[str, Any]:
    return {
        "id": proposal.pk,
        "project": proposal.project.name,
        "name": proposal.name,
        "kind": proposal.kind,
        "status": proposal.status,
        "description": proposal.description,
        "evidence": proposal.evidence,
        "eval_case": proposal.eval_case.get("case", ""),
        "task": task.key if (task := proposal_task(proposal)) else None,
        "session": task.plan.session_id if task else None,
        "created_at": proposal.created_at.isoformat(),
    }


class SkillsCommand(Subcommand):
    name = "skills"
    help = (
        "Sync, list and evaluate skills (.agents/skills in a project, the user folder); "
        "list, accept or reject the skills SF proposes."
    )

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        actions = self.add_actions(
            parser,
            {
                "sync": "read the skill folders into the database now",
                "list": "the skills a unit of the project may use",
                "eval": "run eval cases as real units (live or replayed) and grade them",
                "proposals": "the skills SF proposed from repeated evidence",
            },
        )
        for name in ("sync", "list", "eval"):
            actions[name].add_argument("--project", required=True, help="project name or id")
        _eval_arguments(actions["eval"])
        _proposal_arguments(actions["proposals"])

    def run(self, options: dict[str, Any]) -> int:
        if options["action"] == "proposals":
            return self._proposals(options)
        try:
            actor = acting_actor(options)
            project = find_project(options["project"], actor)
            require_actor(actor, project, ACTION_NEEDS[options["action"]])
            if options["action"] == "eval":
                return self._eval(project, options)
        except SfError as exc:
            self.err(f"error: {exc}")
            return EXIT_USAGE
        if options["action"] == "sync":
            return self._sync(project, options)
        return self._list(project, options)

    def _sync(self, project: Project, options: dict[str, Any]) -> int:
        reports, errors = skills_sync(project)
        if options["output_format"] == "json":
            self.out_json([report.as_dict() for report in reports])
        else:
            for report in reports:
                self.out(report.summary)
                for name, problem in sorted(report.invalid.items()):
                    self.out(f"  invalid {name}: {problem}")
        for error in errors:
            self.err(f"error: {error}")
        invalid = errors or any(report.invalid for report in reports)
        return EXIT_ERROR if invalid else EXIT_OK

    def _list(self, project: Project, options: dict[str, Any]) -> int:
        rows = [
            {
                "name": skill.name,
                "scope": skill.scope,
                "valid": skill.valid,
                "problem": skill.problem,
                "description": skill.description,
                "user_invocable": skill.user_invocable,
                "offered_to_model": model_may_see(skill),
                "side_effects": skill.side_effects,
                "permission_profile": skill.permission_profile,
            }
            for skill in skills_available(project)
        ]
        if options["output_format"] == "json":
            self.out_json(rows)
            return EXIT_OK
        for row in rows:
            state = "valid" if row["valid"] else f"INVALID: {row['problem']}"
            self.out(f"{row['name']:<32} {row['scope']:<8} {state}")
        return EXIT_OK

    def _eval(self, project: Project, options: dict[str, Any]) -> int:
        """Usage errors (raised before any trial runs) exit 2; a trial that cannot run
        is a failure (exit 1) with its message in the JSON."""
        eval_options = _eval_options(options)
        cases = eval_cases(project, skill=options["skill"], case=options["case"])
        if eval_options.replay is not None and len(cases) != 1:
            raise EvalUsage(
                f"--replay TRACE answers one case; {len(cases)} selected "
                "(name the skill and --case, or give --replay alone for each case's own)"
            )
        rows: list[dict[str, Any]] = []
        for case in cases:
            try:
                rows.append(run_as_dict(eval_run(case, options=eval_options)))
            except SfError as exc:
                rows.append(
                    {
                        "skill": case.skill.name,
                        "case": case.name,
                        "passed": False,
                        "error": str(exc),
                        "workspace": "",
                    }
                )
        if options["output_format"] != "json":
            for row in rows:
                verdict = "PASS" if row["passed"] else "FAIL"
                kept = f" (kept: {row['workspace']})" if row["workspace"] else ""
                self.out(f"{verdict} {row['skill']}/{row['case']}{kept} {row['error']}".rstrip())
        passed = all(row["passed"] for row in rows)
        self.out_json({"passed": passed, "runs": rows})
        return EXIT_OK if passed else EXIT_ERROR

    def _proposals(self, options: dict[str, Any]) -> int:
        """``proposals [--project P]``, ``proposals accept|reject ID``."""
        try:
            actor = acting_actor(options)
            if options.get("decision"):
                rows = [self._decide(options["decision"], options["proposal_id"], actor)]
            else:
                rows = self._proposal_rows(options.get("project"), actor)
        except SfError as exc:
            self.err(f"error: {exc}")
            return EXIT_USAGE
        if options["output_format"] == "json":
            self.out_json([proposal_json(p) for p in rows])
            return EXIT_OK
        for p in rows:
            writer = proposal_task(p)
            task = f" task {writer.key} (session {writer.plan.session_id})" if writer else ""
            self.out(f"#{p.pk:<5} {p.status:<9} {p.project.name}: {p.name} [{p.kind}]{task}")
            self.out(f"       {p.description}")
        return EXIT_OK

    def _proposal_rows(self, ref: str | None, actor: Actor) -> list[SkillProposal]:
        if ref:
            project = find_project(ref, actor)
            require_actor(actor, project, Action.VIEW)
            return skill_proposals(project=project)
        rows = skill_proposals()
        if actor.user is None:  # SF's operator at the shell sees every project
            return rows
        visible = set(projects_visible(actor.user).values_list("pk", flat=True))
        return [p for p in rows if p.project_id in visible]

    def _decide(self, decision: str, proposal_id: int, actor: Actor) -> SkillProposal:
        proposal = SkillProposal.objects.select_related("project").filter(pk=proposal_id).first()
        if proposal is None:
            raise SfError(f"no skill proposal {proposal_id}")
        require_actor(actor, proposal.project, Action.VIEW)  # unknown rather than refused
        service = proposal_accept if decision == "accept" else proposal_reject
        return service(proposal=proposal, actor=actor)


def _proposal_arguments(proposals: argparse.ArgumentParser) -> None:
    proposals.add_argument("--project", help="project name or id (default: every one)")
    decide = proposals.add_subparsers(dest="decision")
    for verb in ("accept", "reject"):
        child = decide.add_parser(verb, help=f"{verb} a proposed skill")
        child.add_argument("proposal_id", type=int)
        add_output_format(child)
        add_acting_user(child)


def _eval_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("skill", nargs="?", default="", help="one skill (default: all)")
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


def _eval_options(options: dict[str, Any]) -> EvalOptions:
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


SUBCOMMANDS: list[type[Subcommand]] = [SkillsCommand]
