"""The verification gate: a task's verify commands, run deterministically in its worktree.

No model takes part: a command passes when it exits 0 within the timeout. The
output (capped, redacted) goes back to the next attempt as context.
"""

from __future__ import annotations

import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

from agents_app.gate.redaction import redact_text
from agents_app.runtime.tools import COMMAND_ENV_KEEP, cap


@dataclass(frozen=True)
class CommandResult:
    command: str
    exit_code: int | None  # None: timed out
    output: str
    seconds: float

    @property
    def passed(self) -> bool:
        return self.exit_code == 0


@dataclass(frozen=True)
class Verification:
    results: list[CommandResult]

    @property
    def passed(self) -> bool:
        return bool(self.results) and all(result.passed for result in self.results)

    def report(self) -> str:
        blocks = []
        for result in self.results:
            status = "timed out" if result.exit_code is None else f"exit {result.exit_code}"
            blocks.append(
                f"$ {result.command}  [{status}, {result.seconds:.1f} s]\n{result.output}".rstrip()
            )
        return "\n\n".join(blocks)


def verify(worktree: Path, commands: list[str]) -> Verification:
    """Run every command (all of them, so the report is complete) and report."""
    return Verification([_run(worktree, command) for command in commands])


def _run(worktree: Path, command: str) -> CommandResult:
    env = {k: os.environ[k] for k in COMMAND_ENV_KEEP if k in os.environ}
    env |= {"HOME": str(worktree), "TERM": "dumb", "GIT_TERMINAL_PROMPT": "0", "CI": "1"}
    timeout = settings.SF_VERIFY_TIMEOUT.total_seconds()
    started = time.monotonic()
    try:
        done = subprocess.run(
            ["bash", "-c", command],
            cwd=worktree,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            check=False,
            errors="replace",
        )
    except subprocess.TimeoutExpired:
        return CommandResult(
            command, None, f"timed out after {timeout:g} s", time.monotonic() - started
        )
    output = redact_text(cap(done.stdout + done.stderr, 8000))
    return CommandResult(command, done.returncode, output, time.monotonic() - started)
