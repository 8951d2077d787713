"""``manage.py sf followup``: a person's message to a task's agent (docs/follow-ups.md).

sf followup --session 12 fix-login "Also cover the expired-token case."
sf followup --unit 341 "Stop exploring; the bug is in auth/tokens.py."
echo "…" | sf followup --session 12 fix-login -      # the message from stdin
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from agents_app.access import Action, require_actor
from agents_app.cli import find_session
from sf_core.actors import Actor
from sf_core.cli import (
    EXIT_OK,
    EXIT_USAGE,
    Subcommand,
    acting_actor,
    add_acting_user,
    add_output_format,
)
from sf_core.errors import SfError
from tasks_app.features.followups.services import FollowUpSent, followup_send
from tasks_app.models import Task, Unit


class FollowupCommand(Subcommand):
    name = "followup"
    help = (
        "Send a message to a task's agent: a running unit reads it before its next step; "
        "a failed, paused or reviewed task starts its next attempt with it in the brief."
    )

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("key", nargs="?", help="the task's key (with --session)")
        parser.add_argument("text", help="the message ('-': read it from stdin)")
        parser.add_argument("--session", type=int, help="the task's session")
        parser.add_argument("--unit", type=int, help="a running unit's id, instead of a task")
        parser.add_argument("--project", type=int, help="refuse a task of another project")
        add_output_format(parser)
        add_acting_user(parser)

    def run(self, options: dict[str, Any]) -> int:
        try:
            actor = acting_actor(options)
            text = sys.stdin.read() if options["text"] == "-" else options["text"]
            task, unit = self._target(options, actor)
            sent = followup_send(
                text=text, actor=actor, task=task, unit=unit, project_id=options["project"]
            )
        except SfError as exc:
            self.err(f"error: {exc}")
            return EXIT_USAGE
        self._print(sent, options["output_format"])
        return EXIT_OK

    def _target(self, options: dict[str, Any], actor: Actor) -> tuple[Task | None, Unit | None]:
        if options["unit"] is not None:
            if options["key"] or options["session"] is not None:
                raise SfError("give --unit ID, or --session N and a task key, not both")
            unit = Unit.objects.select_related("task__plan__session__project")
            found = unit.filter(pk=options["unit"]).first()
            if found is None:
                raise SfError(f"no unit with id {options['unit']}")
            require_actor(actor, found.task.plan.session.project, Action.VIEW)
            return None, found
        if options["session"] is None or not options["key"]:
            raise SfError("give --session N and a task key, or --unit ID")
        session = find_session(options["session"], actor)
        tasks = Task.objects.filter(plan__session=session, key=options["key"])
        task = tasks.order_by("-plan__created_at", "-plan_id").first()
        if task is None:
            raise SfError(f"no task {options['key']!r} in session {session.pk}")
        return task, None

    def _print(self, sent: FollowUpSent, output_format: str) -> None:
        followup, task = sent.followup, sent.task
        if output_format == "json":
            self.out_json(
                {
                    "id": followup.pk,
                    "task": task.key,
                    "task_id": task.pk,
                    "task_status": task.status,
                    "unit_id": followup.unit_id,
                    "author": followup.author_label,
                    "delivery": sent.delivery,
                }
            )
            return
        self.out(f"follow-up {followup.pk} to {task.key} [{task.status}]: {sent.delivery}")


SUBCOMMANDS: list[type[Subcommand]] = [FollowupCommand]
