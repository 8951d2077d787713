"""``manage.py sf gate`` (dry-run the permission gate) and ``manage.py sf redact``."""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

from agents_app.axes import PermissionProfile, RunControl, WorkMode
from agents_app.models import Project
from sf_core.cli import EXIT_OK, EXIT_USAGE, Subcommand, add_output_format

MAX_INPUT_DEPTH = 32  # a tool input nests a few levels; deeper is refused, not recursed into


class InputError(ValueError):
    """``--input`` is not a tool input the gate can judge: the message says why."""


def parse_input(text: str) -> dict[str, Any]:
    """The tool input ``--input`` spells: a JSON object of finite numbers and valid
    text, nested at most ``MAX_INPUT_DEPTH`` levels; otherwise ``InputError``."""
    try:
        value = json.loads(text, parse_constant=_no_constant)
    except InputError:
        raise
    except json.JSONDecodeError as exc:
        raise InputError(f"--input is not JSON: {exc.msg} at column {exc.colno}") from None
    except ValueError as exc:  # an integer of more digits than Python converts
        raise InputError(f"--input is not usable JSON: {exc}") from None
    except RecursionError:
        raise InputError(f"--input nests deeper than {MAX_INPUT_DEPTH} levels") from None
    if not isinstance(value, dict):
        raise InputError("--input must be a JSON object")
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:  # iterative: a deep input cannot exhaust the interpreter's stack
        item, depth = stack.pop()
        if depth > MAX_INPUT_DEPTH:
            raise InputError(f"--input nests deeper than {MAX_INPUT_DEPTH} levels")
        if isinstance(item, dict):
            stack += [(key, depth) for key in item]
            stack += [(child, depth + 1) for child in item.values()]
        elif isinstance(item, list):
            stack += [(child, depth + 1) for child in item]
        elif isinstance(item, str) and not _valid_text(item):
            raise InputError("--input holds text that is not valid Unicode (a lone surrogate)")
        elif isinstance(item, float) and not math.isfinite(item):
            raise InputError("--input holds a number too large to represent")
    return value


def _no_constant(name: str) -> None:
    raise InputError(f"--input is not JSON: {name} is not a JSON number")


def _valid_text(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


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
            arguments = parse_input(options["input"])
        except InputError as exc:
            return self._usage(str(exc))
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
            mcp_tools=_mcp_tools(options["tool"], project),
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


def _mcp_tools(tool: str, project: Project | None) -> dict[str, str]:
    """An MCP tool (``mcp__<server>__<tool>``) with the risk class the project's policy
    gives it (none without a project: it asks), as a unit would offer it."""
    from agents_app.gate.mcp import is_mcp
    from agents_app.mcp_schemas import McpPolicy, policy_risk

    if not is_mcp(tool):
        return {}
    policy = project.parsed_policy.mcp if project else McpPolicy()
    return {tool: policy_risk(tool, policy)}


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
