"""The processes a benchmark starts end with it, on every way out.

A script that starts a server or a worker stops it in a ``finally``; that is not
enough: a script ended by SIGTERM (a timeout, Ctrl-C in another terminal, CI) runs no
``finally`` by default, and a server started in a session of its own (``scripts/web.sh``:
uvicorn's supervisor and its processes, stopped together by their group) is not reached
when the script's process group is killed. So every process a script starts goes
through ``start``, which remembers it; SIGTERM and SIGHUP unwind the script like an
exception (its ``finally`` blocks run), and at exit whatever is still running is
stopped, its whole group where it has one of its own. A server in its own group is
also told by the kernel (``PR_SET_PDEATHSIG``) when the script dies by SIGKILL, the one
way out no code of the script sees.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import os
import signal
import subprocess
import threading
from typing import Any

GRACE_S = 20.0  # uvicorn's graceful shutdown is 20 s (scripts/web.sh)
PR_SET_PDEATHSIG = 1

_started: list[tuple[subprocess.Popen[Any], bool]] = []


def start(command: list[str], *, own_group: bool = False, **options: Any) -> subprocess.Popen[Any]:
    """``subprocess.Popen(command, **options)``, stopped when the script ends however it
    ends. ``own_group``: in a session of its own (a supervisor and its children, stopped
    together by their group, apart from the script's), and sent SIGTERM by the kernel if
    the script dies without a word. Start it from the main thread: the kernel's signal
    follows the thread that started the process, not the whole script."""
    if own_group:
        options["start_new_session"] = True
        if threading.current_thread() is threading.main_thread():
            options["preexec_fn"] = _term_when_parent_dies
    process = subprocess.Popen(command, **options)
    _started.append((process, own_group))
    return process


def stop(process: subprocess.Popen[Any], grace: float = GRACE_S) -> None:
    """SIGTERM, then SIGKILL after ``grace`` seconds: to the process's own group when
    it has one (what it started in turn too), else to it alone."""
    own_group = next((own for known, own in _started if known is process), False)
    if process.poll() is None:
        _signal(process, own_group, signal.SIGTERM)
        try:
            process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            _signal(process, own_group, signal.SIGKILL)
            process.wait(timeout=10)
    if own_group:  # the supervisor has gone: a child it left must not outlive it
        _signal(process, own_group, signal.SIGKILL)
    _started[:] = [entry for entry in _started if entry[0] is not process]


def stop_all() -> None:
    """Every process ``start`` started, the last first (a server before what it needs)."""
    for process, _own in reversed(list(_started)):
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            stop(process, grace=10)


def _signal(process: subprocess.Popen[Any], own_group: bool, number: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if own_group:
            os.killpg(process.pid, number)
        else:
            process.send_signal(number)


def _term_when_parent_dies() -> None:
    """In the child, before exec: SIGTERM when the thread that started it ends."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


def _unwind(number: int, _frame: object) -> None:
    raise SystemExit(128 + number)


def install() -> None:
    """SIGTERM and SIGHUP end the script as ``sys.exit`` would (``finally`` blocks and
    ``atexit`` run); at exit every started process is stopped."""
    if threading.current_thread() is threading.main_thread():
        for number in (signal.SIGTERM, signal.SIGHUP):
            if signal.getsignal(number) in (signal.SIG_DFL, None):
                signal.signal(number, _unwind)
    atexit.register(stop_all)
