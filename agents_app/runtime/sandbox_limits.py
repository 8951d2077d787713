"""Resource limits of sandboxed commands: how they are applied and how a command that
ran into one is told apart.

Every limit but the process count is a resource limit (``setrlimit``) set inside the
sandbox on the command's first process, hard and soft alike, by the ``ulimit`` builtin
of the ``bash`` that runs the command (no extra program started per command; the MCP
hub's servers, which are not a ``bash -c``, get them from ``prlimit``, util-linux); the
command cannot raise them (no ``CAP_SYS_RESOURCE``):

- ``memory_mb``: the address space of each process (``RLIMIT_AS``) and, where SF may
  make one, a memory cgroup's limit for all of the command's processes together;
- ``file_size_mb`` (``RLIMIT_FSIZE``), ``open_files`` (``RLIMIT_NOFILE``),
  ``cpu_s`` (``RLIMIT_CPU``);
- ``processes``: ``RLIMIT_NPROC``, counted per user inside the sandbox's own user
  namespace. The kernel does not apply it to processes whose uid outside the namespace
  is root, so when SF runs as root each command also runs in a ``pids`` cgroup
  (``pids.max``) under ``/sys/fs/cgroup/pids/sf-sandbox/`` (cgroup v1, or the pids
  controller of a cgroup v2 mount where it is found at ``/sys/fs/cgroup``), one of no
  other command at the same time (``sandbox_groups`` keeps them between commands).
- ``tmp_mb``: the size of the private ``/tmp`` (``/dev/shm`` gets a quarter).
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import time
import uuid
from functools import cache
from pathlib import Path

from agents_app.runtime.process_group import exited, pidfds
from agents_app.schemas import SandboxLimits

logger = logging.getLogger("sf.sandbox")

PRLIMIT = "/usr/bin/prlimit"
MIB = 1024 * 1024
CGROUP_CANDIDATES = (Path("/sys/fs/cgroup/pids"), Path("/sys/fs/cgroup"))
CGROUP_V2 = Path("/sys/fs/cgroup")
MEMORY_V1 = Path("/sys/fs/cgroup/memory")
CGROUP_PARENT = "sf-sandbox"
POOL_PREFIX = "pool-"  # a worker's reused groups: pool-<its pid>-… (sandbox_groups)
CGROUP_SWEEP_AT = 32  # remove empty leftovers once this many are there
CGROUP_SWEEP_AFTER = 60.0  # seconds: a younger group may be about to be joined
CGROUP_EMPTY_WAIT_S = 10.0  # seconds a killed command's processes get to be gone
CGROUP_KILL_ROUND_S = 0.5  # then the group is read again (what forked meanwhile)


def prlimit_argv(limits: SandboxLimits) -> list[str]:
    """The program that sets the limits, then runs what follows ``--``."""
    return [
        PRLIMIT,
        f"--nproc={limits.processes}",
        f"--as={limits.memory_mb * MIB}",
        f"--fsize={limits.file_size_mb * MIB}",
        f"--nofile={limits.open_files}",
        f"--cpu={limits.cpu_s}",
        "--",
    ]


def ulimit_line(limits: SandboxLimits) -> str:
    """The same limits as a line of ``bash`` (``-f`` and ``-v`` in KiB), ahead of the
    command in the same shell; exit 125 when one cannot be set."""
    kib = MIB // 1024
    return (
        f"ulimit -HS -u {limits.processes} -v {limits.memory_mb * kib} "
        f"-f {limits.file_size_mb * kib} -n {limits.open_files} -t {limits.cpu_s} || exit 125"
    )


def tmp_sizes(limits: SandboxLimits) -> tuple[int, int]:
    """The sizes of the private ``/tmp`` and ``/dev/shm``, in bytes."""
    return limits.tmp_mb * MIB, max(MIB, limits.tmp_mb * MIB // 4)


# --- the pids cgroup (SF running as root) ----------------------------------------------


@cache
def pids_cgroup_root() -> Path | None:
    """Where SF may create pids cgroups: only as root, on a writable pids hierarchy."""
    if os.geteuid() != 0:
        return None
    for base in CGROUP_CANDIDATES:
        if not (base / "cgroup.procs").is_file() or not os.access(base, os.W_OK):
            continue
        v2 = (base / "cgroup.controllers").is_file()
        if v2 and "pids" not in (base / "cgroup.controllers").read_text().split():
            continue
        if not v2 and not (base / "pids.max").exists() and base.name != "pids":
            continue
        parent = base / CGROUP_PARENT
        try:
            parent.mkdir(exist_ok=True)
            if v2:
                (base / "cgroup.subtree_control").write_text("+pids")
                (parent / "cgroup.subtree_control").write_text("+pids")
        except OSError as exc:
            logger.warning("cannot create pids cgroups under %s: %s", base, exc)
            continue
        return parent
    return None


def pids_cgroup(limits: SandboxLimits) -> Path | None:
    """A new cgroup limited to ``limits.processes`` tasks, or None without one."""
    parent = pids_cgroup_root()
    if parent is None:
        return None
    sweep(parent)
    group = parent / uuid.uuid4().hex
    try:
        group.mkdir()
        (group / "pids.max").write_text(str(limits.processes))
    except OSError as exc:
        logger.warning("cannot create the pids cgroup %s: %s", group, exc)
        with contextlib.suppress(OSError):
            group.rmdir()
        return None
    return group


def pids_cgroup_empty(group: Path, wait_s: float = CGROUP_EMPTY_WAIT_S) -> bool:
    """Kill whatever is left in ``group`` and wait until none of it is alive (True),
    or ``wait_s`` passed. Right after a command bwrap's own process 1 of the sandbox is
    usually still there, tearing the PID namespace down (bwrap returns the command's
    status before it is done): waited for on pidfds, which turn readable the moment
    the process has exited and left the group, not polled."""
    deadline = time.monotonic() + wait_s
    while True:
        pids = cgroup_members(group)
        if not pids:
            return True
        left = deadline - time.monotonic()
        if left <= 0:
            logger.warning("%d processes of %s did not die in %s s", len(pids), group, wait_s)
            return False
        fds = pidfds(pids)
        try:
            # A pid listed again once its pidfd is open names that very process (had
            # it died and its pid gone to a new one, the pidfd would name the dead
            # one, and the signal reach nobody): never a process outside the group.
            still = set(cgroup_members(group))
            for pid, fd in fds.items():
                if pid in still:
                    with contextlib.suppress(ProcessLookupError):
                        signal.pidfd_send_signal(fd, signal.SIGKILL)
            if fds:
                exited(fds.values(), min(left, CGROUP_KILL_ROUND_S))
            else:  # listed, yet none could be opened: out of descriptors?
                time.sleep(0.005)
        finally:
            for fd in fds.values():
                os.close(fd)


def cgroup_members(group: Path) -> list[int]:
    """The processes in ``group`` ([] once it is gone)."""
    try:
        return [int(pid) for pid in (group / "cgroup.procs").read_text().split()]
    except OSError:
        return []


def pids_cgroup_remove(group: Path | None) -> None:
    """Remove ``group``; while its killed processes are still exiting the kernel
    refuses, and a later sweep removes it (nobody waits for that)."""
    if group is None:
        return
    with contextlib.suppress(OSError):
        group.rmdir()


# --- the memory cgroup (wherever SF may make one) ---------------------------------------


@cache
def memory_cgroup_root() -> Path | None:
    """Where SF may create memory cgroups: under its own cgroup (so that what a command
    uses still counts towards SF's own limit), on cgroup v1's memory hierarchy or on a
    cgroup v2 tree where SF's cgroup may enable the memory controller for children (a
    delegated subtree; v2 refuses that in a cgroup with processes of its own, SF's
    usually). None: memory is limited per process only (``RLIMIT_AS``)."""
    for base, own in _own_cgroups():
        here = base / own.lstrip("/")
        if not (here / "cgroup.procs").is_file() or not os.access(here, os.W_OK):
            continue
        parent = here / CGROUP_PARENT
        try:
            parent.mkdir(exist_ok=True)
            if (base / "cgroup.controllers").is_file():
                (here / "cgroup.subtree_control").write_text("+memory")
                (parent / "cgroup.subtree_control").write_text("+memory")
        except OSError as exc:
            logger.warning("cannot create memory cgroups under %s: %s", here, exc)
            continue
        return parent
    return None


def _own_cgroups() -> list[tuple[Path, str]]:
    """(hierarchy, SF's cgroup in it) for the memory controller: v1's, then v2's."""
    found = []
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            if "memory" in controllers.split(","):
                found.append((MEMORY_V1, path))
            elif controllers == "" and "memory" in _v2_controllers():
                found.append((CGROUP_V2, path))
    return found


def _v2_controllers() -> list[str]:
    with contextlib.suppress(OSError):
        return (CGROUP_V2 / "cgroup.controllers").read_text().split()
    return []


def memory_cgroup(limits: SandboxLimits) -> Path | None:
    """A new cgroup whose processes together may use ``limits.memory_mb`` (memory and
    swap alike, ``/tmp`` included: tmpfs pages count for who wrote them); past it the
    kernel's OOM killer kills one of them. None without a memory hierarchy."""
    parent = memory_cgroup_root()
    if parent is None:
        return None
    sweep(parent)
    group = parent / uuid.uuid4().hex
    try:
        group.mkdir()
        memory_limit_write(group, limits.memory_mb * MIB, None)
    except OSError as exc:
        logger.warning("cannot create the memory cgroup %s: %s", group, exc)
        pids_cgroup_remove(group)
        return None
    return group


def memory_limit_write(group: Path, limit: int, previous: int | None) -> None:
    """Limit ``group`` to ``limit`` bytes of memory and swap together (``previous``:
    its limit before, None for a new group, unlimited). On v1 the memory-and-swap
    limit may never be below the memory limit: the two are written in the order that
    keeps it so."""
    if (group / "memory.max").exists():  # v2
        (group / "memory.max").write_text(str(limit))
        if previous is None:
            (group / "memory.swap.max").write_text("0")
        return
    memsw = group / "memory.memsw.limit_in_bytes"
    order = ["memory.limit_in_bytes", memsw.name]
    if previous is not None and limit > previous:
        order.reverse()
    for name in order:
        if name == memsw.name and not memsw.exists():
            continue
        (group / name).write_text(str(limit))


def oom_kills(group: Path | None) -> int:
    """How many processes of ``group`` the kernel's OOM killer has killed so far (the
    count only grows: a reused group's is read before and after a command)."""
    if group is None:
        return 0
    for name in ("memory.events", "memory.oom_control"):  # v2, v1
        with contextlib.suppress(OSError, ValueError):
            for line in (group / name).read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
    return 0


def sweep(parent: Path) -> None:
    """Remove the groups left behind; never one made in the last ``CGROUP_SWEEP_AFTER``
    seconds: a command in another worker made it and has not joined it yet (an empty
    group is removable, and its command then failed with "Directory nonexistent"), nor
    one of the pool of a process alive (``sandbox_groups``: kept empty between its
    commands)."""
    with contextlib.suppress(OSError):
        children = [child for child in parent.iterdir() if child.is_dir()]
        if len(children) < CGROUP_SWEEP_AT:
            return
        settled = time.time() - CGROUP_SWEEP_AFTER
        for child in children:
            if _pooled_by_a_live_process(child.name):
                continue
            with contextlib.suppress(OSError):
                if child.stat().st_mtime < settled:
                    child.rmdir()  # refused while it still has processes


def _pooled_by_a_live_process(name: str) -> bool:
    if not name.startswith(POOL_PREFIX):
        return False
    pid = name[len(POOL_PREFIX) :].split("-", 1)[0]
    return pid.isdigit() and Path("/proc", pid).is_dir()


# --- telling a limit from a failure -----------------------------------------------------

_SIGNALS = {
    signal.SIGXCPU: ("cpu_s", "CPU time", "s"),
    signal.SIGXFSZ: ("file_size_mb", "file size", "MiB"),
}
_MESSAGES = (
    (("Cannot allocate memory", "MemoryError", "bad_alloc", "out of memory"), "memory_mb"),
    (("fork: retry", "Resource temporarily unavailable", "Cannot fork"), "processes"),
    (("Too many open files",), "open_files"),
    (("File too large",), "file_size_mb"),
    (("No space left on device",), "tmp_mb"),
)
_WHAT = {
    "memory_mb": ("memory (address space)", "MiB"),
    "processes": ("processes", ""),
    "open_files": ("open files", ""),
    "file_size_mb": ("file size", "MiB"),
    "tmp_mb": ("/tmp size", "MiB"),
}


def limit_note(
    exit_code: int | None, output: str, limits: SandboxLimits, *, memory_killed: bool = False
) -> str:
    """A line saying which limit a failed command most likely ran into ('' for none);
    ``memory_killed``: the memory cgroup's OOM killer killed one of its processes."""
    if memory_killed:
        return _note(
            "memory_mb",
            "memory (the command's cgroup; a process was killed)",
            limits.memory_mb,
            "MiB",
        )
    if exit_code in (None, 0):
        return ""
    for signum, (key, what, unit) in _SIGNALS.items():
        if exit_code in (128 + signum, -signum):
            return _note(key, what, getattr(limits, key), unit)
    for needles, key in _MESSAGES:
        if any(needle in output for needle in needles):
            what, unit = _WHAT[key]
            return _note(key, what, getattr(limits, key), unit)
    return ""


def _note(key: str, what: str, value: int, unit: str) -> str:
    amount = f"{value} {unit}".strip()
    return (
        f"[sandbox] the command ran into its {what} limit ({amount}; the project "
        f"policy's sandbox.{key})"
    )
