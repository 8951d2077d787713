"""The seccomp filter of sandboxed commands, compiled with libseccomp.

bubblewrap loads a compiled BPF program from a file descriptor (``--seccomp FD``) right
before it runs the command, after it has set the sandbox up. The program allows every
system call but the ones a command never needs and an escape would: mounting and
unmounting, pivoting the root, tracing other processes, the kernel keyring, eBPF,
entering or creating namespaces (``unshare``, ``setns``, ``clone`` with a ``CLONE_NEW*``
flag; ``clone3`` answers ``ENOSYS`` so that the C library falls back to ``clone``, whose
flags the filter can see), loading kernel modules, rebooting, ``perf_event_open``,
``userfaultfd`` and pushing characters into a terminal (``TIOCSTI``). A refused call
fails with ``EPERM``; a call from another architecture's ABI (a 32-bit ``int 0x80``)
kills the process (libseccomp's default for a foreign architecture).

The filter is built with ``pyseccomp`` (ctypes over Debian's ``libseccomp.so.2``, API
compatible with libseccomp's own bindings, which are not on PyPI as a wheel).
"""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agents_app.runtime.sandbox_fs import private_dir

# Refused outright (EPERM). Names libseccomp does not know on this kernel are skipped.
REFUSED_SYSCALLS = (
    "mount",
    "umount",
    "umount2",
    "pivot_root",
    "chroot",
    "move_mount",
    "open_tree",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "mount_setattr",
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "keyctl",
    "add_key",
    "request_key",
    "bpf",
    "unshare",
    "setns",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "reboot",
    "swapon",
    "swapoff",
    "syslog",
    "acct",
    "quotactl",
    "perf_event_open",
    "userfaultfd",
    "open_by_handle_at",
    "lookup_dcookie",
    # io_uring's operations (open, connect, …) do not pass through this filter.
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
)
# The argument holding the mode of the system calls that set one: a mode with the
# setuid or setgid bit is refused. What a command makes is the bwrap user's on the
# host (root, when SF runs as root): a setuid file in the worktree was a setuid-root
# program for every user of the host. openat2 carries its mode in a structure the
# filter cannot read: it answers ENOSYS, and the C library falls back to openat.
MODE_ARGUMENT = {
    "open": 2,
    "openat": 3,
    "creat": 1,
    "mknod": 1,
    "mknodat": 2,
    "chmod": 1,
    "fchmod": 1,
    "fchmodat": 2,
    "fchmodat2": 2,
}
SET_ID_BITS = (0o4000, 0o2000)
CLONE_NAMESPACE_FLAGS = (
    0x00000080,  # CLONE_NEWTIME
    0x00020000,  # CLONE_NEWNS
    0x02000000,  # CLONE_NEWCGROUP
    0x04000000,  # CLONE_NEWUTS
    0x08000000,  # CLONE_NEWIPC
    0x10000000,  # CLONE_NEWUSER
    0x20000000,  # CLONE_NEWPID
    0x40000000,  # CLONE_NEWNET
)
TIOCSTI = 0x5412
TIOCLINUX = 0x541C

_lock = threading.Lock()
_compiled: dict[str, Path] = {}


def seccomp_program() -> bytes:
    """The compiled BPF program (raises ``OSError`` when libseccomp is missing)."""
    import pyseccomp as seccomp  # ctypes loads libseccomp.so.2 on import

    refuse = seccomp.ERRNO(errno.EPERM)
    rules = seccomp.SyscallFilter(seccomp.ALLOW)
    for name in REFUSED_SYSCALLS:
        try:
            rules.add_rule(refuse, name)
        except (OSError, ValueError, RuntimeError):  # unknown to this libseccomp
            continue
    for flag in CLONE_NAMESPACE_FLAGS:
        rules.add_rule(refuse, "clone", seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag))
    rules.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    _refuse_set_id_modes(seccomp, rules, refuse)
    for request in (TIOCSTI, TIOCLINUX):
        rules.add_rule(refuse, "ioctl", seccomp.Arg(1, seccomp.MASKED_EQ, 0xFFFFFFFF, request))
    with tempfile.TemporaryFile() as out:
        rules.export_bpf(out)
        out.seek(0)
        return out.read()


def _refuse_set_id_modes(seccomp: Any, rules: Any, refuse: Any) -> None:
    for name, at in MODE_ARGUMENT.items():
        for bit in SET_ID_BITS:
            try:
                rules.add_rule(refuse, name, seccomp.Arg(at, seccomp.MASKED_EQ, bit, bit))
            except (OSError, ValueError, RuntimeError):  # unknown to this libseccomp
                break
    try:
        rules.add_rule(seccomp.ERRNO(errno.ENOSYS), "openat2")
    except (OSError, ValueError, RuntimeError):
        return


def seccomp_file(private_dir: Path) -> Path:
    """The compiled program in SF's private directory (written once per process;
    written again if something removed it)."""
    key = str(private_dir)
    with _lock:
        path = _compiled.get(key)
        if path is not None and path.is_file():
            return path
        path = private_dir / "seccomp.bpf"
        partial = private_dir / f".seccomp.bpf.{os.getpid()}"
        partial.write_bytes(seccomp_program())
        partial.replace(path)
        _compiled[key] = path
        return path


def seccomp_fd() -> int:
    """The compiled filter, opened for one command (``bwrap --seccomp`` reads it from
    where the descriptor stands: one per command); the caller closes it."""
    return os.open(seccomp_file(private_dir()), os.O_RDONLY | os.O_CLOEXEC)


@contextlib.contextmanager
def filter_fds(wanted: bool) -> Iterator[tuple[int, ...]]:
    """The filter's descriptor for a command started without the wrapper (none with
    it: the wrapper opens the filter)."""
    fds = (seccomp_fd(),) if wanted else ()
    try:
        yield fds
    finally:
        for fd in fds:
            os.close(fd)
