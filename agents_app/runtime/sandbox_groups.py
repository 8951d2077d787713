"""The cgroups a sandboxed command runs in, and the end of a command: none of its
processes outlives ``sandboxed_run``.

Cgroups (``sandbox_limits``: a pids group when SF is root, a memory group where SF may
make one) are kept in a small pool of each worker process and reused, instead of made
and removed around every command: a removed v1 memory group lingers in the kernel as
long as page cache is charged to it, and thousands a day slow reclaim down. A set is
reused only once every group of it holds no process (checked when it is given back and
again when it is taken), with its limits written again whenever the next command's
differ; the memory group's OOM kill count is read relative to the command's start. The
sets are named ``pool-<pid>-…``: the sweep of left-behind groups spares those of a
process alive, and a process forked from a worker makes its own (never two commands in
one group: the end of one would kill the other).

The end: with cgroups, every process left in the command's group is killed and waited
for; without (SF not root, no memory cgroup), the sandbox's process 1 (bwrap's init,
reported on ``--json-status-fd``) is waited for: it exits only once every process of
the sandbox's PID namespace is gone, and it dies with bwrap (``--die-with-parent``).
Both waits are on pidfds (no polling) and bounded (``CGROUP_EMPTY_WAIT_S``).
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import itertools
import json
import logging
import os
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from agents_app.runtime import sandbox_limits
from agents_app.runtime.process_group import exited, pidfds
from agents_app.runtime.sandbox_limits import (
    CGROUP_EMPTY_WAIT_S,
    MIB,
    POOL_PREFIX,
    cgroup_members,
    memory_limit_write,
    oom_kills,
    pids_cgroup_empty,
)
from agents_app.schemas import SandboxLimits

logger = logging.getLogger("sf.sandbox")

POOL_MAX = 4  # sets kept per process: more only while as many commands run at once
STATUS_FD_FROM = 10  # bwrap's status pipe: above the wrapper's descriptor 3


@dataclass(eq=False)
class CgroupSet:
    """A command's cgroups: ``pids`` (SF as root) and ``memory``, those this host has,
    with the limits last written to them."""

    pids: Path | None
    memory: Path | None
    pids_max: str = ""
    memory_max: str = ""
    oom_kills_before: int = 0

    @property
    def paths(self) -> list[Path]:
        return [group for group in (self.pids, self.memory) if group is not None]


_lock = threading.Lock()
_pool: list[CgroupSet] = []
_stale: list[Path] = []
_owner = [os.getpid()]
_names = itertools.count()
_token = [uuid.uuid4().hex[:8]]


def _forget_after_fork() -> None:
    """A forked child's pool is its parent's groups: never used by the child."""
    _pool.clear()
    _stale.clear()
    _owner[0] = os.getpid()
    _token[0] = uuid.uuid4().hex[:8]


os.register_at_fork(after_in_child=_forget_after_fork)


def _roots() -> tuple[Path | None, Path | None]:
    return sandbox_limits.pids_cgroup_root(), sandbox_limits.memory_cgroup_root()


def take(limits: SandboxLimits) -> CgroupSet | None:
    """Empty cgroups with ``limits`` for one command, from this process's pool or new;
    None when this host gives SF none (as before the pool: a group SF cannot make or
    limit is logged and the command runs under its rlimits alone)."""
    pids_root, memory_root = _roots()
    if pids_root is None and memory_root is None:
        return None
    with _lock:
        if _owner[0] != os.getpid():
            _forget_after_fork()
        pooled = _pool.pop() if _pool else None
    # A pooled set that cannot be used (a process in it; a limit refused: v1 refuses a
    # memory limit below what is still charged to the group) gives way to a new one.
    if pooled is not None:
        if _empty(pooled) and _limited(pooled, limits):
            return pooled
        _discard(pooled)
    found = _new_set(pids_root, memory_root)
    if found is not None and _limited(found, limits):
        return found
    if found is not None:
        _discard(found)
    return None


def _limited(found: CgroupSet, limits: SandboxLimits) -> bool:
    try:
        _limit(found, limits)
    except OSError as exc:
        logger.warning("cannot set the limits of the cgroups %s: %s", found.paths, exc)
        return False
    found.oom_kills_before = oom_kills(found.memory)
    return True


def _new_set(pids_root: Path | None, memory_root: Path | None) -> CgroupSet | None:
    _remove_stale()
    name = f"{POOL_PREFIX}{os.getpid()}-{_token[0]}-{next(_names)}"
    made = CgroupSet(None, None)
    for root, attribute in ((pids_root, "pids"), (memory_root, "memory")):
        if root is None:
            continue
        sandbox_limits.sweep(root)
        try:
            (root / name).mkdir()
        except OSError as exc:
            logger.warning("cannot create the cgroup %s: %s", root / name, exc)
            continue
        setattr(made, attribute, root / name)
    return made if made.paths else None


def _limit(found: CgroupSet, limits: SandboxLimits) -> None:
    """Write the limits that differ from those the set has (most commands of a worker
    have their project's, the same as the command before)."""
    pids_max = str(limits.processes)
    if found.pids is not None and found.pids_max != pids_max:
        found.pids_max = ""  # unknown until written
        (found.pids / "pids.max").write_text(pids_max)
        found.pids_max = pids_max
    memory_max = str(limits.memory_mb * MIB)
    if found.memory is not None and found.memory_max != memory_max:
        previous = int(found.memory_max) if found.memory_max else None
        found.memory_max = ""
        memory_limit_write(found.memory, int(memory_max), previous)
        found.memory_max = memory_max


def _empty(found: CgroupSet) -> bool:
    return all(group.is_dir() and not cgroup_members(group) for group in found.paths)


def give_back(found: CgroupSet, emptied: bool) -> None:
    """Keep ``found`` for a later command when it holds no process; remove it otherwise
    (or when the pool is full; a group still holding a process is left to the sweep)."""
    if emptied and _empty(found):
        with _lock:
            if _owner[0] == os.getpid() and len(_pool) < POOL_MAX:
                _pool.append(found)
                return
    _discard(found)


def _discard(found: CgroupSet) -> None:
    """Remove ``found``'s groups; one the kernel refuses (a process still in it) is
    tried again when this process makes a new set: the sweep spares its name."""
    for group in found.paths:
        try:
            group.rmdir()
        except FileNotFoundError:
            pass
        except OSError:
            with _lock:
                _stale.append(group)


def _remove_stale() -> None:
    with _lock:
        stale = list(_stale)
        _stale.clear()
    for group in stale:
        _discard(CgroupSet(group, None))


@dataclass(eq=False)
class CommandEnd:
    """What one sandboxed command runs in and how its end is waited for: ``groups`` for
    the wrapper to join, or ``status_fd`` for ``bwrap --json-status-fd``."""

    cgroups: CgroupSet | None
    status: tuple[int, int] | None  # (read, write) ends of bwrap's status pipe
    memory_killed: bool = False
    gone: bool = True

    @property
    def groups(self) -> list[Path]:
        return self.cgroups.paths if self.cgroups is not None else []

    @property
    def status_fd(self) -> int | None:
        return self.status[1] if self.status is not None else None

    @property
    def pass_fds(self) -> tuple[int, ...]:
        return (self.status[1],) if self.status is not None else ()

    def wait(self) -> None:
        """Until none of the command's processes is alive (``gone``; bounded), then
        the cgroups back to the pool."""
        if self.cgroups is not None:
            self.gone = pids_cgroup_empty(self.cgroups.paths[0])
            memory = self.cgroups.memory
            self.memory_killed = oom_kills(memory) > self.cgroups.oom_kills_before
            give_back(self.cgroups, self.gone)
        elif self.status is not None:
            init = init_pid(self.status[0])
            for fd in self.status:
                os.close(fd)
            self.gone = init is None or _init_gone(init)


@contextlib.contextmanager
def command_end(limits: SandboxLimits, sandboxed: bool) -> Iterator[CommandEnd]:
    """The cgroups for a command (or bwrap's status pipe without them); when the block
    ends, however it ends, the wait until its processes are gone (``CommandEnd.wait``)."""
    cgroups = take(limits) if sandboxed else None
    status = _status_pipe() if sandboxed and cgroups is None else None
    end = CommandEnd(cgroups, status)
    try:
        yield end
    finally:
        end.wait()


def _status_pipe() -> tuple[int, int]:
    read, write = os.pipe2(os.O_CLOEXEC | os.O_NONBLOCK)
    try:
        high = fcntl.fcntl(write, fcntl.F_DUPFD_CLOEXEC, STATUS_FD_FROM)
    finally:
        os.close(write)
    return read, high


def init_pid(read_fd: int) -> int | None:
    """The host pid of the sandbox's process 1, from bwrap's first status line (written
    by bwrap itself before the command starts; the command has no descriptor of it)."""
    try:
        first = os.read(read_fd, 4096).split(b"\n", 1)[0]
        pid = json.loads(first)["child-pid"]
    except (OSError, ValueError, KeyError, TypeError):  # bwrap failed before: no sandbox
        return None
    return pid if isinstance(pid, int) and pid > 1 else None


def _init_gone(pid: int) -> bool:
    """Wait for the sandbox's process 1 to exit, which it does once every process of
    its PID namespace is gone. Opened right after bwrap (its parent) exited: its pid
    cannot have gone to another process in the meantime (that takes every other pid
    being used first). Never signalled: it dies with bwrap (``--die-with-parent``)."""
    fds = pidfds([pid])
    try:
        if exited(fds.values(), CGROUP_EMPTY_WAIT_S):
            return True
    finally:
        for fd in fds.values():
            os.close(fd)
    logger.warning("the sandbox's process %d did not end in %s s", pid, CGROUP_EMPTY_WAIT_S)
    return False


def pool_size() -> int:
    """How many cgroup sets this process keeps for later commands (for tests)."""
    with _lock:
        return len(_pool) if _owner[0] == os.getpid() else 0


@atexit.register
def _drain() -> None:
    """The pool's groups go with the process (else with the sweep, once it is gone)."""
    with _lock:
        kept = list(_pool) if _owner[0] == os.getpid() else []
        _pool.clear()
    for found in kept:
        _discard(found)
    _remove_stale()
