"""The verification gate: a task's verify commands, run deterministically in its worktree.

No model takes part: a command passes when it exits 0 within the timeout. The
output (capped, redacted) goes back to the next attempt as context.

Under ``--autonomous`` the model may write the plan, and so its verify commands: each
is judged by the permission gate like an agent's ``run_command``, under the session's
profile and the project's rules as they are now, and the decision is stored as a
``RiskDecision``. A command the gate denies does not run. One it would ask about runs
when a person accepted the plan — they were shown its verify commands, and the plan page
says that accepting it approves them: the decision is stored as approved by them. Under
a plan nobody accepted (``sf headless --autonomous``), it does not run: the verification
fails with the gate's reason in its output (a person who wants it to run allows it in
the project policy or approves the same command for the agent at session or project
scope). What runs, runs in the OS sandbox (``agents_app.runtime.sandbox``).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.contrib.auth.models import User

from agents_app.gate.judged import command_judged, refusal
from agents_app.gate.redaction import redact_text
from agents_app.models import AgentSession
from agents_app.runtime.sandbox import SandboxPolicy, SandboxRefused, policy_for, sandboxed_run
from agents_app.runtime.tools import COMMAND_ENV_KEEP, cap


@dataclass(frozen=True)
class CommandResult:
    command: str
    exit_code: int | None  # None: timed out, or not run
    output: str
    seconds: float
    refused: str = ""  # the gate's decision ("deny", "ask") when the command did not run

    @property
    def passed(self) -> bool:
        return self.exit_code == 0 and not self.refused

    @property
    def status(self) -> str:
        if self.refused:
            return f"not run: the gate says {self.refused}"
        return "timed out" if self.exit_code is None else f"exit {self.exit_code}"


@dataclass(frozen=True)
class Verification:
    results: list[CommandResult]

    @property
    def passed(self) -> bool:
        return bool(self.results) and all(result.passed for result in self.results)

    def report(self) -> str:
        blocks = []
        for result in self.results:
            blocks.append(
                f"$ {result.command}  [{result.status}, {result.seconds:.1f} s]\n"
                f"{result.output}".rstrip()
            )
        return "\n\n".join(blocks)


def verify(
    worktree: Path,
    commands: list[str],
    *,
    session_id: int,
    unit_id: int | None = None,
    accepted_by: User | None = None,
    env: dict[str, str] | None = None,
) -> Verification:
    """Judge and run every command (all of them, so the report is complete).
    ``accepted_by``: the person who accepted the plan these commands are part of;
    ``env``: the unit's resources (docs/worktree-environment.md)."""
    results = []
    for command in commands:
        session = AgentSession.objects.select_related("project").get(pk=session_id)
        verdict = command_judged(
            session,
            command,
            worktree=worktree,
            unit_id=unit_id,
            why="verify command",
            approved_by=accepted_by,
            approval_note="a verify command of the plan they accepted",
        )
        if verdict.decision == "deny" or (verdict.decision == "ask" and accepted_by is None):
            output = f"not run: {refusal(verdict)}"
            results.append(CommandResult(command, None, output, 0.0, verdict.decision))
            continue
        parsed = session.project.parsed_policy
        policy = policy_for(session.permission_profile, parsed.egress, parsed.sandbox)
        results.append(_run(worktree, command, policy, env or {}))
    return Verification(results)


def _run(
    worktree: Path, command: str, policy: SandboxPolicy, extra: dict[str, str]
) -> CommandResult:
    env = {k: os.environ[k] for k in COMMAND_ENV_KEEP if k in os.environ}
    env |= {"TERM": "dumb", "GIT_TERMINAL_PROMPT": "0", "CI": "1"} | extra
    timeout = settings.SF_VERIFY_TIMEOUT.total_seconds()
    started = time.monotonic()
    try:
        done = sandboxed_run(command, worktree=worktree, policy=policy, env=env, timeout=timeout)
    except SandboxRefused as exc:
        return CommandResult(command, None, str(exc), 0.0, "deny")
    seconds = time.monotonic() - started
    if done.exit_code is None:
        return CommandResult(command, None, f"timed out after {timeout:g} s", seconds)
    return CommandResult(command, done.exit_code, redact_text(cap(done.output, 8000)), seconds)
