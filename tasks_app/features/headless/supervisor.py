"""``--max-restarts N``: run headless in a child process and restart it when it crashes.

A crash is the child dying from a signal (kill -9, the OOM killer) or from an error
the engine did not expect (exit 70 from a supervised child). The parent waits 5 s,
10 s, then 30 s (the cap) between restarts; each restart resumes the same session
with ``--session`` and crash recovery picks up the unit that was running. A child that
asks for a reload (exit 12) is restarted at once. After N restarts the parent exits 1.
SIGINT/SIGTERM to the parent are passed on to the child, which stops cleanly (11).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

from django.utils import timezone

from tasks_app.features.headless.events import ExitCode, RestartEvent, ResultEvent

BACKOFF = (5.0, 10.0, 30.0)
CHILD = "SF_HEADLESS_CHILD"
RESUME = "SF_HEADLESS_RESUME"
CRASHED = 70  # a supervised child's unexpected error (EX_SOFTWARE)
# The child writes the id of the session it drives to the file this names, so a
# restart after a crash resumes the same session.
SESSION_FILE = "SF_HEADLESS_SESSION_FILE"
MAX_RELOADS = 10_000


def backoff(restart: int) -> float:
    """Seconds to wait before restart number ``restart`` (1-based)."""
    return BACKOFF[min(restart, len(BACKOFF)) - 1]


def is_child() -> bool:
    return os.environ.get(CHILD) == "1"


def supervise(
    *,
    max_restarts: int,
    emit: Callable[[Any], None],
    finish: Callable[[ResultEvent], None],
    progress: Callable[[str], None],
    stdout: Any = None,
    argv: list[str] | None = None,
) -> int:
    """Run the child until it ends other than by a crash or reload; its exit code.

    ``stdout`` is where results go (the child writes its events there directly);
    ``finish`` prints the supervisor's own result when it gives up."""
    command = [sys.executable, *(argv or sys.argv)]
    with tempfile.TemporaryDirectory(prefix="sf-headless-") as scratch:
        session_file = Path(scratch) / "session"
        env = {**os.environ, CHILD: "1", SESSION_FILE: str(session_file)}
        restarts = reloads = 0
        cancelled: list[int] = []
        child: subprocess.Popen[bytes] | None = None

        def forward(signum: int, _frame: FrameType | None) -> None:
            cancelled.append(signum)
            if child is not None and child.poll() is None:
                child.send_signal(signum)

        signal.signal(signal.SIGINT, forward)
        signal.signal(signal.SIGTERM, forward)
        while True:
            child = subprocess.Popen(command, env=env, stdout=stdout)  # stderr passes through
            progress(f"headless child pid {child.pid}")
            code = _wait(child)
            if cancelled or (code not in (CRASHED, ExitCode.RELOAD) and code >= 0):
                return ExitCode.CANCELLED if cancelled and code < 0 else code
            if session_file.exists():
                env[RESUME] = session_file.read_text().strip()
            if code == ExitCode.RELOAD and reloads < MAX_RELOADS:
                reloads += 1
                reason, wait = "the engine asked for a reload", 0.0
            elif restarts >= max_restarts:
                finish(_gave_up(code, restarts, env.get(RESUME)))
                return int(ExitCode.ERROR)
            else:
                restarts += 1
                reason, wait = _crash_reason(code), backoff(restarts)
            event = RestartEvent(
                at=timezone.now(), restart=restarts, of=max_restarts, after_s=wait, reason=reason
            )
            emit(event)
            progress(f"{reason}; restarting in {wait:g} s ({restarts}/{max_restarts})")
            if _cancelled_while_waiting(wait, cancelled):
                return int(ExitCode.CANCELLED)


def _cancelled_while_waiting(seconds: float, cancelled: list[int]) -> bool:
    """Wait before a restart; a signal meanwhile ends the wait (and the supervisor)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not cancelled:
        time.sleep(0.1)
    return bool(cancelled)


def _wait(child: subprocess.Popen[bytes]) -> int:
    while True:
        try:
            return child.wait()
        except InterruptedError:  # pragma: no cover - PEP 475 retries for us
            continue


def _crash_reason(code: int) -> str:
    if code < 0:
        return f"the run crashed (killed by {signal.Signals(-code).name})"
    return f"the run crashed (exit {code})"


def _gave_up(code: int, restarts: int, session: str | None) -> ResultEvent:
    return ResultEvent(
        at=timezone.now(),
        ok=False,
        exit_code=int(ExitCode.ERROR),
        status="error",
        reason=f"{_crash_reason(code)}; {restarts} restarts spent (--max-restarts)",
        session=int(session) if session else None,
        resume=f"python manage.py sf headless --session {session}" if session else "",
    )
