"""Resource limits of sandboxed commands: how they are applied and how a command that
ran into one is told apart.

Every limit but the process count is a resource limit (``setrlimit``) that
``prlimit`` (util-linux) sets, inside the sandbox, on the command's first process,
hard and soft alike; the command cannot raise it (no ``CAP_SYS_RESOURCE``):

- ``memory_mb``: the address space of each process (``RLIMIT_AS``). Not a cgroup
  memory limit: SF does not manage cgroup v2 subtrees (this machine has cgroup v1);
- ``file_size_mb`` (``RLIMIT_FSIZE``), ``open_files`` (``RLIMIT_NOFILE``),
  ``cpu_s`` (``RLIMIT_CPU``);
- ``processes``: ``RLIMIT_NPROC``, counted per user inside the sandbox's own user
  namespace. The kernel does not apply it to processes whose uid outside the namespace
  is root, so when SF runs as root each command is also put in a ``pids`` cgroup of its
  own (``pids.max``) under ``/sys/fs/cgroup/pids/sf-sandbox/`` (cgroup v1, or the pids
  controller of a cgroup v2 mount where it is found at ``/sys/fs/cgroup``).
- ``tmp_mb``: the size of the private ``/tmp`` (``/dev/shm`` gets a quarter).
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import uuid
from functools import cache
from pathlib import Path

from agents_app.schemas import SandboxLimits

logger = logging.getLogger("sf.sandbox")

PRLIMIT = "/usr/bin/prlimit"
MIB = 1024 * 1024
CGROUP_CANDIDATES = (Path("/sys/fs/cgroup/pids"), Path("/sys/fs/cgroup"))
CGROUP_PARENT = "sf-sandbox"
CGROUP_SWEEP_AT = 32  # remove empty leftovers once this many are there


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
    _sweep(parent)
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


def pids_cgroup_remove(group: Path | None) -> None:
    """Remove ``group``; while its killed processes are still exiting the kernel
    refuses, and a later sweep removes it (nobody waits for that)."""
    if group is None:
        return
    with contextlib.suppress(OSError):
        group.rmdir()


def _sweep(parent: Path) -> None:
    with contextlib.suppress(OSError):
        children = [child for child in parent.iterdir() if child.is_dir()]
        if len(children) < CGROUP_SWEEP_AT:
            return
        for child in children:
            with contextlib.suppress(OSError):
                child.rmdir()  # refused while it still has processes


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


def limit_note(exit_code: int | None, output: str, limits: SandboxLimits) -> str:
    """A line saying which limit a failed command most likely ran into ('' for none)."""
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
