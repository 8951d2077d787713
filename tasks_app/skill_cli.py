"""``manage.py sf skills`` with its proposals: ``sf skills proposals [--project P]``,
``sf skills proposals accept ID`` and ``sf skills proposals reject ID``.

skills_app owns ``sf skills sync|list``; accepting a proposal plans a task, which is
this app's work and above skills_app. So this subclass adds the ``proposals`` action,
and ``tasks_app.cli`` lists it under the same name: the dispatcher
(``sf_web/management/commands/sf.py``) keeps the last command of a name, and
``tasks_app.cli`` comes after ``skills_app.cli`` in ``SUBCOMMAND_MODULES``.
"""

from __future__ import annotations

import argparse
from typing import Any

from agents_app.access import Action, projects_visible, require_actor
from sf_core.actors import Actor
from sf_core.cli import EXIT_OK, EXIT_USAGE, acting_actor, add_acting_user, add_output_format
from sf_core.errors import SfError
from skills_app.cli import SkillsCommand, find_project
from skills_app.models import SkillProposal
from tasks_app.skill_proposals import proposal_accept, proposal_reject, skill_proposals


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
        "task": proposal.task.key if proposal.task else None,
        "session": proposal.task.plan.session_id if proposal.task else None,
        "created_at": proposal.created_at.isoformat(),
    }


class SkillsWithProposalsCommand(SkillsCommand):
    help = "Sync and list skills; list, accept or reject the skills SF proposes."

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        super().add_arguments(parser)
        # The parent's subparsers, to add one more action beside sync and list.
        actions = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        proposals = actions.add_parser(
            "proposals", help="the skills SF proposed from repeated evidence"
        )
        proposals.add_argument("--project", help="project name or id (default: every one)")
        decide = proposals.add_subparsers(dest="decision")
        for verb in ("accept", "reject"):
            child = decide.add_parser(verb, help=f"{verb} a proposed skill")
            child.add_argument("proposal_id", type=int)
            add_output_format(child)
            add_acting_user(child)
        add_output_format(proposals)
        add_acting_user(proposals)

    def run(self, options: dict[str, Any]) -> int:
        if options["action"] != "proposals":
            return super().run(options)
        try:
            actor = acting_actor(options)
            if options.get("decision"):
                rows = [self._decide(options["decision"], options["proposal_id"], actor)]
            else:
                rows = self._proposals(options.get("project"), actor)
        except SfError as exc:
            self.err(f"error: {exc}")
            return EXIT_USAGE
        if options["output_format"] == "json":
            self.out_json([proposal_json(p) for p in rows])
            return EXIT_OK
        for p in rows:
            task = f" task {p.task.key} (session {p.task.plan.session_id})" if p.task else ""
            self.out(f"#{p.pk:<5} {p.status:<9} {p.project.name}: {p.name} [{p.kind}]{task}")
            self.out(f"       {p.description}")
        return EXIT_OK

    def _proposals(self, ref: str | None, actor: Actor) -> list[SkillProposal]:
        if ref:
            project = find_project(ref)
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
