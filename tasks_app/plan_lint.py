"""The plan lint: what is wrong with a plan's verify commands before anyone accepts it.

Each verify command is

- parsed by the gate's shell parser (``agents_app.gate.shell.analyze``): one it cannot
  read never runs;
- judged by the gate (``agents_app.gate.policy.decide``) as an agent's ``run_command``
  at the profile the plan will run under: a deny never runs, and an ask does not run
  unattended (``sf headless --autonomous``: nobody accepted the plan) — under a person's
  acceptance it is a warning, since accepting approves it;
- looked up: every program it runs is a shell builtin, a file in the repository or on
  the worktree's ``PATH`` (the repository's ``.venv/bin`` and ``node_modules/.bin``
  first);
- about the task: it names a file the task claims or a name its criteria define, or runs
  the project's whole test suite;
- a check, not a placebo (``echo …``, ``true``) and not the fix itself (``sed -i``, a
  redirect into a file, anything the gate sees writing a file).

Findings are plain dicts (stored on ``Plan.lint``, shown on the plan page, sent back to
the planner): ``{"task", "command", "level": "error"|"warning", "message"}``.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import Any

from agents_app.axes import PermissionProfile, RunControl, WorkMode
from agents_app.gate.catalog.classify import classify
from agents_app.gate.policy import decide
from agents_app.gate.schemas import GateContext, PolicyRules, ToolCall
from agents_app.gate.shell.analyze import analyze
from agents_app.gate.shell.commands import ShellAnalysis
from tasks_app.schemas import PlanSpec, TaskSpec

Finding = dict[str, str]
ERROR, WARNING = "error", "warning"
BUILTINS = frozenset(
    str.split(
        "test [ [[ cd true false : echo printf exit export set unset read pwd "
        "source . eval exec command type shift return wait trap umask"
    )
)
# Commands that check nothing about the work: a verify of only these always passes.
VACUOUS = frozenset({"echo", "printf", "true", ":", "exit", "sleep", "pwd", "cd"})
WRITING = re.compile(r"^(sed|perl|ruby)$")
_IDENTIFIER = re.compile(r"`([^`\s]+)`|\b([A-Za-z_][A-Za-z0-9_]*_[A-Za-z0-9_]+|[a-z]+[A-Z]\w*)\b")


def plan_lint(
    spec: PlanSpec,
    *,
    root: Path,
    profile: str,
    rules: PolicyRules | None = None,
    unattended: bool = False,
    default_verify: list[str] | None = None,
) -> list[Finding]:
    """Every finding on ``spec``'s verify commands (see the module docstring)."""
    context = GateContext(
        permission_profile=PermissionProfile(profile),
        run_control=RunControl.AUTONOMOUS,
        work_mode=WorkMode.BUILD,
        worktree=root,
        rules=rules or PolicyRules(),
    )
    path = _search_path(root)
    findings: list[Finding] = []
    for task in spec.tasks:
        for command in task.verify or default_verify or []:
            for level, message in _command_findings(task, command, context, path, unattended):
                findings.append(
                    {"task": task.key, "command": command, "level": level, "message": message}
                )
    return findings


def lint_errors(findings: list[Finding]) -> list[Finding]:
    return [finding for finding in findings if finding.get("level") == ERROR]


def lint_text(findings: list[Finding]) -> str:
    """One line per finding, as the planner is told and a person reads them."""
    return "\n".join(
        f"{f['task']}: `{f['command']}`: {f['level']}: {f['message']}" for f in findings
    )


def _command_findings(
    task: TaskSpec, command: str, context: GateContext, path: str, unattended: bool
) -> list[tuple[str, str]]:
    analysis = analyze(command)
    if analysis.opaque:
        reason = analysis.reason or analysis.opaque_kind
        return [(ERROR, f"the gate's shell parser cannot read it ({reason}); it never runs")]
    findings = _gate_findings(command, context, unattended)
    findings += _program_findings(analysis, context.worktree, path)
    findings += _shape_findings(analysis)
    if not findings and not _touches(task, command, analysis):
        findings.append(
            (
                ERROR,
                "it names no file the task changes (intent_claim) and no name its criteria "
                "define, and does not run the whole test suite: it does not check this task",
            )
        )
    return findings


def _gate_findings(command: str, context: GateContext, unattended: bool) -> list[tuple[str, str]]:
    call = ToolCall(tool="run_command", input={"command": command})
    decision = decide(call, context)
    profile = context.permission_profile.value
    if decision.decision == "deny":
        return [(ERROR, f"the gate denies it under {profile} ({decision.rule}): {decision.reason}")]
    if decision.decision == "ask":
        if unattended:
            return [
                (
                    ERROR,
                    f"the gate would ask a person under {profile} ({decision.rule}) and "
                    "nobody is there to answer: it does not run unattended",
                )
            ]
        return [(WARNING, f"the gate asks under {profile}: accepting the plan approves it")]
    return []


def _program_findings(analysis: ShellAnalysis, root: Path, path: str) -> list[tuple[str, str]]:
    findings = []
    for part in analysis.commands:
        program = part.argv[0] if part.argv else ""
        if not program or program in BUILTINS or _present(program, root, path):
            continue
        findings.append((ERROR, f"{program}: no such program in the worktree's environment"))
    return findings


def _present(program: str, root: Path, path: str) -> bool:
    if "/" in program:
        return (root / program).is_file() or Path(program).is_file()
    return shutil.which(program, path=path) is not None


def _search_path(root: Path) -> str:
    local = [str(root / ".venv" / "bin"), str(root / "node_modules" / ".bin")]
    return os.pathsep.join([*local, os.environ.get("PATH", os.defpath)])


def _shape_findings(analysis: ShellAnalysis) -> list[tuple[str, str]]:
    names = [part.name for part in analysis.commands]
    if names and all(name in VACUOUS for name in names):
        return [(ERROR, "it checks nothing: it passes whatever the code does")]
    for part in analysis.commands:
        writes = classify(part).writes
        in_place = WRITING.match(part.name) and any(a.startswith("-i") for a in part.args)
        if writes or in_place:
            return [(ERROR, f"`{part.text}` changes files: a verify command checks the work")]
    if any(redirect.writes for redirect in analysis.redirects):
        return [(ERROR, "it writes a file (a redirect): a verify command checks the work")]
    return []


def _touches(task: TaskSpec, command: str, analysis: ShellAnalysis) -> bool:
    """It names the task's files or names, or runs a whole test suite (a test runner
    given no path)."""
    for claim in task.intent_claim:
        name = claim.rsplit("/", 1)[-1]
        stem = name.rsplit(".", 1)[0]
        if claim in command or name in command or (len(stem) >= 3 and stem in command):
            return True
    if any(name in command for name in task_names(task)):
        return True
    for part in analysis.commands:
        if classify(part).family == "build" and not any(
            "/" in arg or "." in arg or "::" in arg for arg in part.args if not arg.startswith("-")
        ):
            return True  # the whole suite: whatever the task changed, it is run
    return not task.intent_claim and not task_names(task)


def task_names(task: TaskSpec) -> set[str]:
    """The code names a task's title and criteria mention (``is_even``, ``isEven``, or
    anything in backticks)."""
    text = " ".join([task.title, *task.acceptance_criteria])
    names = set()
    for quoted, bare in _IDENTIFIER.findall(text):
        name = (quoted or bare).strip("()")
        if len(name) >= 3:
            names.add(name)
    return names


def lint_dicts(findings: Any) -> list[Finding]:
    """Stored findings as a list of dicts (an old row may hold none)."""
    return [f for f in findings or [] if isinstance(f, dict)]
