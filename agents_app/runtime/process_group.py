"""Running a command as a process group of its own (``group_run``): the whole group is
killed when the command returns, times out or the caller is interrupted, and its output
is read from a file (the sandbox, ``agents_app.runtime.sandbox``, runs every command
this way, sandboxed or not)."""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import IO

# Read at most this many bytes from each end of a command's output.
OUTPUT_READ_BYTES = 64 * 1024


def group_run(
    argv: list[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout: float,
    pass_fds: Sequence[int] = (),
) -> tuple[int | None, str]:
    """Run ``argv`` as the leader of a new session; wait up to ``timeout``; then kill
    the whole process group, whether the command finished, timed out or we were
    interrupted. Output goes to a file, so a background process that keeps the
    descriptor open cannot make us wait for it. ``pass_fds``: descriptors the command
    inherits. Returns (exit code or None, output)."""
    with tempfile.TemporaryFile() as out:
        process = subprocess.Popen(
            argv,
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            pass_fds=tuple(pass_fds),
        )
        try:
            finished = _wait_unreaped(process.pid, timeout)
        finally:
            # The leader is alive or a zombie here (not yet reaped), so its process
            # group id cannot have been reused by an unrelated process.
            _kill_group(process.pid)
            process.wait()
        return (process.returncode if finished else None), _read_ends(out)


def _wait_unreaped(pid: int, timeout: float) -> bool:
    """Wait for ``pid`` to exit without reaping it; False when the timeout passed."""
    fd = os.pidfd_open(pid)
    try:
        ready, _, _ = select.select([fd], [], [], timeout)
    finally:
        os.close(fd)
    return bool(ready)


def pidfds(pids: Iterable[int]) -> dict[int, int]:
    """A pidfd for each of ``pids`` still alive (or a zombie); the caller closes them.
    A pidfd names one process for good: a signal through it never reaches another
    process that got the same pid later, and it turns readable when that one exits."""
    fds: dict[int, int] = {}
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            fds[pid] = os.pidfd_open(pid)
    return fds


def exited(fds: Iterable[int], wait_s: float) -> bool:
    """Wait up to ``wait_s`` until the process of each pidfd has exited (True). Not
    polled: the kernel wakes us the moment the last one is dead."""
    deadline = time.monotonic() + wait_s
    poller = select.poll()
    for fd in fds:
        poller.register(fd, select.POLLIN)
    waiting = set(fds)
    while waiting:
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        for fd, _ in poller.poll(left * 1000):
            waiting.discard(fd)
            poller.unregister(fd)
    return True


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGKILL)


def _read_ends(out: IO[bytes]) -> str:
    """The output, or its first and last ``OUTPUT_READ_BYTES`` when it is longer."""
    size = out.seek(0, os.SEEK_END)
    out.seek(0)
    if size <= 2 * OUTPUT_READ_BYTES:
        return out.read().decode("utf-8", errors="replace")
    head = out.read(OUTPUT_READ_BYTES)
    out.seek(size - OUTPUT_READ_BYTES)
    tail = out.read()
    cut = size - 2 * OUTPUT_READ_BYTES
    return (
        head.decode("utf-8", errors="replace")
        + f"\n[… {cut} bytes of output cut …]\n"
        + tail.decode("utf-8", errors="replace")
    )
