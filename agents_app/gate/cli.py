"""``manage.py sf gate`` (dry-run the permission gate) and ``manage.py sf redact``."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from agents_app.axes import PermissionProfile, RunControl, WorkMode
from agents_app.models import Project
from sf_core.cli import EXIT_OK, EXIT_USAGE, Subcommand, add_output_format


class GateCommand(Subcommand):
    name = "gate"
    help = "Show what the permission gate decides for a tool call, without running it."

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--profile", required=True, choices=PermissionProfile.values)
        parser.add_argument("--run-control", default="autonomous", choices=RunControl.values)
        parser.add_argument("--work-mode", default="build", choices=WorkMode.values)
        parser.add_argument("--project", type=int, help="use this project's rules and repository")
        parser.add_argument("--worktree", help="the worktree to judge paths against (default: cwd)")
        parser.add_argument("--tool", required=True)
        parser.add_argument(
            "--input", required=True, help='the tool input as JSON, e.g. {"command": "ls"}'
        )
        add_output_format(parser)

    def run(self, options: dict[str, Any]) -> int:
        # Imported here: the gate and the session runtime take ~0.1 s to load, which
        # every other `manage.py sf` subcommand would otherwise pay at start-up.
        from agents_app.gate.normalize import normalize_input
        from agents_app.gate.policy import decide
        from agents_app.gate.schemas import GateContext, PolicyRules, ToolCall
        from agents_app.gate.session import gate_rules, input_hash

        try:
            arguments = json.loads(options["input"])
        except json.JSONDecodeError as exc:
            return self._usage(f"--input is not JSON: {exc.msg} at column {exc.colno}")
        if not isinstance(arguments, dict):
            return self._usage("--input must be a JSON object")
        project = (
            Project.objects.filter(pk=options["project"]).first() if options["project"] else None
        )
        if options["project"] and project is None:
            return self._usage(f"no project with id {options['project']}")
        worktree = Path(options["worktree"] or (project.repo_path if project else Path.cwd()))
        context = GateContext(
            permission_profile=PermissionProfile(options["profile"]),
            run_control=RunControl(options["run_control"]),
            work_mode=WorkMode(options["work_mode"]),
            worktree=worktree,
            rules=gate_rules(project) if project else PolicyRules(),
        )
        call = ToolCall(tool=options["tool"], input=arguments)
        verdict = decide(call, context)
        normalized = normalize_input(call, worktree)
        result = {
            "decision": verdict.decision,
            "rule": verdict.rule,
            "risk_class": verdict.risk_class,
            "reason": verdict.reason,
            "input": normalized,
            "input_hash": input_hash(options["tool"], normalized),
        }
        if options["output_format"] == "json":
            self.out_json(result)
        else:
            self.out(f"{verdict.decision.upper()}  rule {verdict.rule}  risk {verdict.risk_class}")
            self.out(f"  {verdict.reason}")
        return EXIT_OK

    def _usage(self, message: str) -> int:
        self.err(f"error: {message}")
        return EXIT_USAGE


class RedactCommand(Subcommand):
    name = "redact"
    help = "Print standard input with secrets redacted (the rules SF applies everywhere)."

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--findings", action="store_true", help="list what was found on stderr")

    def run(self, options: dict[str, Any]) -> int:
        import sf_native

        result = sf_native.redact(sys.stdin.read())
        self.stdout.write(result.text)
        if options["findings"]:
            for finding in result.findings:
                self.err(f"{finding.kind} at {finding.start}-{finding.end}")
        return EXIT_OK


SUBCOMMANDS: list[type[Subcommand]] = [GateCommand, RedactCommand]
