"""The OS sandbox around agent and verify commands: the second wall behind the gate.

The gate (``agents_app.gate``) decides a command from its text; this module makes
sure that what the command then does stays small whatever the gate missed. With
bubblewrap (Debian's ``bubblewrap``, ``bwrap``) a command runs:

- as an unprivileged user (uid 1000, ``sandbox``; on the host SF's user, or when SF is
  root the unprivileged ``SF_SANDBOX_USER``: ``sandbox_user``) in a user namespace of
  its own, with every capability dropped, unable to create further namespaces, under a
  seccomp filter that refuses mount, umount, pivot_root, ptrace, keyctl, bpf, unshare,
  setns and the like (``sandbox_seccomp``), in its own PID, IPC, UTS, cgroup and
  network namespaces: when the command returns, every process it left behind dies with
  the namespace;
- with an allowlist of the host's files (``sandbox_fs``): the toolchain and a minimal
  ``/etc`` read-only, the worktree writable, of the repository's ``.git`` only what a
  commit in a worktree needs, private size-limited ``/tmp`` and ``/dev/shm``, an empty
  ``$HOME``, nothing else;
- under resource limits (``sandbox_limits``): processes, address space, file size,
  open files and CPU time, from the project policy's ``sandbox`` with safe defaults;
- in a network namespace of its own, always: a project's egress list adds SF's
  filtering proxy as its only way out (``agents_app.runtime.egress``); it never
  shares the host's network, so no loopback server is reachable.

Every command, sandboxed or not, runs in a process group of its own; the group is
killed when the command returns, times out or the caller is interrupted, and
``--die-with-parent`` kills the sandbox if the worker that ran it dies.
"""

from __future__ import annotations

import logging
import os
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache, lru_cache
from pathlib import Path
from typing import Literal

from django.conf import settings

from agents_app.axes import profile_rank
from agents_app.runtime.egress import EgressProxy, bridge_problem, egress_for
from agents_app.runtime.process_group import group_run as group_run  # re-exported
from agents_app.runtime.sandbox_acl import X, grant_path
from agents_app.runtime.sandbox_fs import (
    SANDBOX_GID,
    SANDBOX_UID,
    SANDBOX_USER,
    SandboxGitError,
    etc_dir,
    git_binds,
    hidden_binds,
    private_dir,
    toolchain_binds,
)
from agents_app.runtime.sandbox_groups import command_end
from agents_app.runtime.sandbox_limits import limit_note, prlimit_argv, tmp_sizes, ulimit_line
from agents_app.runtime.sandbox_seccomp import filter_fds, seccomp_file
from agents_app.runtime.sandbox_seccomp import seccomp_fd as seccomp_fd  # re-exported
from agents_app.runtime.sandbox_user import HostUser, grant_binds, host_user, run_as_argv
from agents_app.schemas import SandboxLimits

logger = logging.getLogger("sf.sandbox")

SANDBOX_MODES = ("bwrap", "off")
PROBE_TIMEOUT_S = 10
# Profiles above this rank run only in a sandbox (or with SF_SANDBOX=off).
HIGHEST_UNSANDBOXED_PROFILE = "restricted"


@dataclass(frozen=True)
class SandboxPolicy:
    """What one command may do beyond its worktree (nothing by default), the
    session's profile it runs under and the project's resource limits. ``egress``: the
    hosts it may reach through SF's filtering proxy (``agents_app.runtime.egress``);
    ``network`` is on exactly when there are some: the sandbox never shares the
    host's network."""

    network: bool = False
    profile: str = "restricted"
    egress: tuple[str, ...] = ()
    limits: SandboxLimits = field(default_factory=SandboxLimits)


def policy_for(
    profile: str, egress: Sequence[str], limits: SandboxLimits | None = None
) -> SandboxPolicy:
    """The project's egress list; the ``unrestricted`` profile is ``*`` (every public
    host, still through the proxy: never loopback or a private address)."""
    hosts = ("*",) if profile == "unrestricted" else tuple(egress)
    return SandboxPolicy(
        network=bool(hosts), profile=profile, egress=hosts, limits=limits or SandboxLimits()
    )


class SandboxRefused(Exception):
    """A command under a profile above ``restricted`` while the sandbox is unavailable."""


@dataclass(frozen=True)
class SandboxState:
    """How commands run on this host: ``bwrap`` (sandboxed), ``off`` (the operator
    opted out) or ``unavailable`` (bwrap missing, or unable to make the unprivileged
    sandbox: no user namespaces, no seccomp)."""

    mode: Literal["bwrap", "off", "unavailable"]
    detail: str
    bwrap: str = ""

    @property
    def sandboxed(self) -> bool:
        return self.mode == "bwrap"


def sandbox_state() -> SandboxState:
    mode = settings.SF_SANDBOX
    if mode == "off":
        return SandboxState("off", "SF_SANDBOX=off: commands run without the OS sandbox")
    bwrap = str(settings.SF_SANDBOX_BWRAP)
    problem = bwrap_problem(bwrap)
    if problem:
        return SandboxState("unavailable", problem)
    return SandboxState("bwrap", f"bubblewrap at {bwrap}", bwrap)


@cache
def bwrap_problem(bwrap: str) -> str:
    """Why ``bwrap`` cannot sandbox here ('' when it can): missing, no user namespaces
    or no seccomp. The probe is a real run with the flags every command gets."""
    if not os.access(bwrap, os.X_OK):
        return f"bubblewrap is not installed at {bwrap} (SF_SANDBOX_BWRAP)"
    try:
        filter_file = seccomp_file(private_dir())
    except OSError as exc:
        return f"the seccomp filter cannot be built (libseccomp.so.2: {exc})"
    user = host_user()
    probe = ["/bin/sh", "-c", WRAPPER, "sf-sandbox", str(filter_file), "--"]
    probe += [*(run_as_argv(user) if user else []), bwrap]
    probe += ["--unshare-all", *identity_args(), *toolchain_binds()]
    probe += ["--proc", "/proc", "--dev", "/dev", "--seccomp", "3", "true"]
    try:
        done = subprocess.run(
            probe, capture_output=True, text=True, timeout=PROBE_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{bwrap} cannot run: {exc}"
    if done.returncode != 0:
        lines = (done.stderr.strip() or f"exit {done.returncode}").splitlines()
        return (
            f"{bwrap} cannot create an unprivileged sandbox here (user, PID and network "
            f"namespaces, seccomp): {lines[-1]}"
        )
    return ""


def profile_problem(profile: str) -> str:
    """Why ``profile`` may not be used on this host ('' when it may)."""
    if profile_rank(profile) <= profile_rank(HIGHEST_UNSANDBOXED_PROFILE):
        return ""
    state = sandbox_state()
    if state.mode != "unavailable":
        return ""
    return (
        f"the {profile} profile needs the OS sandbox, and {state.detail}; install "
        "bubblewrap (scripts/setup.sh does) or set SF_SANDBOX=off to run without it"
    )


# --- the bwrap command line -------------------------------------------------------------

# Opens the compiled seccomp filter as descriptor 3 for ``bwrap --seccomp 3``, moves
# itself into the command's cgroups (each ``cgroup.procs`` named before ``--``), then
# becomes what follows (as root: setpriv, then bwrap).
WRAPPER = (
    'exec 3<"$1" || exit 125; shift; '
    'while [ "$1" != -- ]; do echo $$ >"$1" || exit 125; shift; done; shift; exec "$@"'
)
CgroupArg = Path | Sequence[Path] | None


def network_args(proxy: EgressProxy | None) -> list[str]:
    """The one place that decides the command's network: always a namespace of its own
    (``--unshare-all``: nothing but its own loopback); with an egress grant, SF's
    filtering proxy's socket and the proxy variables (``agents_app.runtime.egress``)."""
    return proxy.bwrap_args() if proxy is not None else []


@dataclass(frozen=True)
class Launch:
    """How bwrap is started, besides its arguments. ``user``: the host user it runs as
    when SF is root (``sandbox_user``; None: SF's own user). ``seccomp_fd``: the
    compiled filter already open in SF, handed to the child (``pass_fds``); None: the
    wrapper opens it. ``cgroup``: the cgroups the wrapper moves the process into.
    ``status_fd``: where bwrap reports the pid of the sandbox's process 1
    (``--json-status-fd``; ``sandbox_groups`` waits for it when there are no cgroups)."""

    user: HostUser | None = None
    seccomp_fd: int | None = None
    cgroup: CgroupArg = None
    proxy: EgressProxy | None = None
    git_writable: bool = True
    status_fd: int | None = None


def sandbox_argv(
    command: str,
    *,
    worktree: Path,
    policy: SandboxPolicy,
    bwrap: str,
    cwd: Path | None = None,
    home: Path | None = None,
    hidden: Sequence[Path] = (),
    launch: Launch = Launch(),
) -> list[str]:
    """The argv that runs ``bash -c command`` in the sandbox. The limits are set by
    that ``bash`` itself (``ulimit``, the line ahead of the command), and by the egress
    bridge's before it starts the relay: no program runs only to set them."""
    argv = _bwrap_argv(worktree, policy, bwrap, cwd, home, hidden, (), launch)
    limits = ulimit_line(policy.limits)
    if launch.proxy is not None:  # the bridge starts before the command, under the limits
        argv += launch.proxy.bridge_argv(prelude=limits)
    return [*argv, "bash", "-c", f"{limits}\n{command}"]


def sandbox_prefix(
    *,
    worktree: Path,
    policy: SandboxPolicy,
    bwrap: str,
    home: Path | None = None,
    hidden: Sequence[Path] = (),
    expose: Sequence[Path] = (),
    launch: Launch = Launch(),
) -> list[str]:
    """The argv up to the program it runs (an MCP server): the wrapper, bwrap,
    ``prlimit`` and, with a proxy, the egress bridge. The repository's git directories
    are all read-only for it (``git_writable=False``): a server lives as long as its
    unit, so a link it planted there could appear while SF's own git runs."""
    launch = replace(launch, seccomp_fd=None, git_writable=False)
    argv = _bwrap_argv(worktree, policy, bwrap, None, home, hidden, expose, launch)
    proxy = launch.proxy
    bridge = proxy.bridge_argv() if proxy is not None else []  # started before the program
    return [*argv, *prlimit_argv(policy.limits), *bridge]


def _bwrap_argv(
    worktree: Path,
    policy: SandboxPolicy,
    bwrap: str,
    cwd: Path | None,
    home: Path | None,
    hidden: Sequence[Path],
    expose: Sequence[Path],
    launch: Launch,
) -> list[str]:
    """The wrapper (when there are cgroups to join or no open filter), the change of
    user, and bwrap's own arguments. Mounts apply in order: the toolchain and ``/etc``,
    the private file systems, what is ``expose``d read-only (an MCP server installed
    under ``$HOME``), SF's own paths hidden inside those (all of which the same for
    every command of a process: built once, ``_fixed_args``), then the worktree and
    git's directories."""
    worktree = worktree.resolve()
    cgroup = launch.cgroup
    groups = [cgroup] if isinstance(cgroup, Path) else list(cgroup or ())
    argv: list[str] = []
    seccomp = str(launch.seccomp_fd)
    if groups or launch.seccomp_fd is None:
        procs = [str(group / "cgroup.procs") for group in groups]
        argv = ["/bin/sh", "-c", WRAPPER, "sf-sandbox", str(seccomp_file(private_dir()))]
        argv += [*procs, "--"]
        seccomp = "3"
    if launch.user is not None:
        argv += run_as_argv(launch.user)
    bwrap_at = len(argv)
    argv += _fixed_args(
        bwrap,
        home,
        tmp_sizes(policy.limits),
        tuple(settings.SF_SANDBOX_RO_PATHS),
        tuple(expose),
        tuple(hidden),
        etc_dir(home),
    )
    try:
        git = git_binds(worktree, writable=launch.git_writable)
    except SandboxGitError as exc:
        raise SandboxRefused(f"the worktree's git metadata was changed: {exc}") from None
    argv += ["--bind", str(worktree), str(worktree), *git]
    argv += network_args(launch.proxy)
    if launch.status_fd is not None:
        argv += ["--json-status-fd", str(launch.status_fd)]
    argv += ["--remount-ro", "/", "--seccomp", seccomp, "--chdir", str(cwd or worktree)]
    if home is not None:
        argv += ["--setenv", "HOME", str(home)]
    if launch.user is not None:  # ``OSError``: a file system without ACLs
        grant_binds(argv[bwrap_at:], launch.user)
        if launch.proxy is not None:  # its socket, in a directory only root may search
            grant_path(launch.proxy.directory, launch.user.uid, X)
            os.chmod(launch.proxy.socket, 0o666)
    argv += ["--setenv", "TMPDIR", "/tmp", "--setenv", "USER", SANDBOX_USER]
    # The sandbox's /etc/gitconfig (sandbox_fs), whatever path git was built with.
    return [*argv, "--setenv", "GIT_CONFIG_SYSTEM", "/etc/gitconfig"]


@lru_cache(maxsize=64)
def _fixed_args(
    bwrap: str,
    home: Path | None,
    sizes: tuple[int, int],
    ro_paths: tuple[str, ...],
    expose: tuple[Path, ...],
    hidden: tuple[Path, ...],
    etc: Path,
) -> tuple[str, ...]:
    """bwrap's arguments that do not depend on the worktree (``etc``: the current copy
    of ``/etc``, so that a new copy makes new arguments)."""
    extra = [Path(path) for path in ro_paths]
    argv = [bwrap, "--unshare-all", *identity_args(), *toolchain_binds(extra)]
    argv += ["--ro-bind", str(etc), "/etc", *private_mounts(sizes, home)]
    for path in expose:
        argv += ["--ro-bind", str(path), str(path)]
    return (*argv, *hidden_binds(hidden, [*extra, *expose]))


def identity_args() -> list[str]:
    """An unprivileged user in a user namespace of its own, without any capability (the
    seccomp filter refuses every further namespace: ``--disable-userns`` would cost a
    nested namespace per command for nothing more); a new session (no ``TIOCSTI``
    into SF's terminal) that dies with its parent."""
    return [
        "--unshare-user",
        "--uid",
        str(SANDBOX_UID),
        "--gid",
        str(SANDBOX_GID),
        "--cap-drop",
        "ALL",
        "--die-with-parent",
        "--new-session",
    ]


def private_mounts(sizes: tuple[int, int], home: Path | None) -> list[str]:
    """``/proc``, ``/dev``, and size-limited private ``/tmp`` (``/var/tmp`` is a link to
    it: one mount less), ``/dev/shm`` and ``$HOME`` (an empty tmpfs)."""
    tmp, shm = sizes
    # /proc/sys read-only: the command's uid is the uid that started bwrap, and the
    # kernel lets root write its sysctls without a capability (bwrap covers /proc/sys
    # only where it can write the directory itself, which it cannot).
    # /dev read-only once /dev/shm is in: bwrap's /dev is a tmpfs without a size (half
    # the host's memory) that the command could fill; its devices are mounts of their
    # own, and stay writable.
    argv = ["--proc", "/proc", "--ro-bind", "/proc/sys", "/proc/sys", "--dev", "/dev"]
    argv += ["--size", str(shm), "--tmpfs", "/dev/shm", "--remount-ro", "/dev"]
    argv += ["--size", str(tmp), "--tmpfs", "/tmp", "--symlink", "/tmp", "/var/tmp"]
    if home is not None and home.resolve() != Path("/"):
        argv += ["--size", str(tmp), "--tmpfs", str(home.resolve())]
    return argv


# --- running a command ------------------------------------------------------------------


@dataclass(frozen=True)
class CommandRun:
    exit_code: int | None  # None: timed out (the whole group was killed)
    output: str  # stdout and stderr, interleaved as written
    seconds: float
    sandboxed: bool


def sandboxed_run(
    command: str,
    *,
    worktree: Path,
    policy: SandboxPolicy,
    env: Mapping[str, str],
    timeout: float,
    cwd: Path | None = None,
) -> CommandRun:
    """Run ``command`` with bash in the sandbox (or, with the sandbox off or
    unavailable, as a plain process group with ``HOME`` at the worktree)."""
    problem = profile_problem(policy.profile)
    if problem:
        raise SandboxRefused(problem)
    state = sandbox_state()
    # With egress, the command's only way out is SF's proxy, for as long as it runs.
    hosts = egress_hosts(policy) if state.sandboxed else ()
    if hosts and bridge_problem():
        raise SandboxRefused(bridge_problem())
    started = time.monotonic()
    # The command's cgroups; once it ended (finished, timed out or interrupted), none
    # of its processes outlives this call (a timeout's kill reaches the sandbox's own
    # processes through --die-with-parent, asynchronously): SF's git, which may run
    # next on the worktree, never runs beside them (sandbox_groups).
    with (
        command_end(policy.limits, state.sandboxed) as end,
        egress_for(hosts) as proxy,
        filter_fds(state.sandboxed and not end.groups) as fds,
    ):
        launch = Launch(
            seccomp_fd=fds[0] if fds else None,
            cgroup=end.groups,
            proxy=proxy,
            status_fd=end.status_fd,
        )
        argv, env = _command_argv(command, state, worktree, policy, env, cwd, launch)
        exit_code, output = group_run(
            argv, cwd=cwd or worktree, env=env, timeout=timeout, pass_fds=(*fds, *end.pass_fds)
        )
    note = (
        limit_note(exit_code, output, policy.limits, memory_killed=end.memory_killed)
        if state.sandboxed
        else ""
    )
    if note:  # a command stopped by a limit keeps its output, with the limit named
        output = f"{output.rstrip()}\n{note}\n"
    if proxy is not None:  # each request into the unit's trace, with the output
        output = proxy.traced(output)
    return CommandRun(exit_code, output, time.monotonic() - started, state.sandboxed)


def _command_argv(
    command: str,
    state: SandboxState,
    worktree: Path,
    policy: SandboxPolicy,
    env: Mapping[str, str],
    cwd: Path | None,
    launch: Launch,
) -> tuple[list[str], dict[str, str]]:
    if not state.sandboxed:
        _warn_unsandboxed(state)
        return ["bash", "-c", command], {**env, "HOME": str(worktree)}
    user = host_user()

    def argv_as(how: Launch) -> list[str]:
        return sandbox_argv(
            command,
            worktree=worktree,
            policy=policy,
            bwrap=state.bwrap,
            cwd=cwd,
            home=home_dir(),
            hidden=sf_own_paths(),
            launch=how,
        )

    try:
        argv = argv_as(replace(launch, user=user))
    except OSError as exc:  # no ACLs here: bwrap runs as SF's user (root), as before
        if user is None:
            raise
        logger.warning("the sandbox runs as root for %s: %s", worktree, exc)
        argv = argv_as(launch)
    return argv, dict(env)


def egress_hosts(policy: SandboxPolicy) -> tuple[str, ...]:
    """The hosts a command may reach: the policy's list; a bare ``network`` grant (an
    MCP server's ``network: true`` without a project list) is every public host."""
    return policy.egress or (("*",) if policy.network else ())


def home_dir() -> Path | None:
    home = os.environ.get("HOME")
    return Path(home) if home else None


def sf_own_paths() -> list[Path]:
    """SF's own checkout and data directory: hidden from everything sandboxed."""
    return [Path(settings.BASE_DIR), Path(settings.SF_DATA_DIR)]


@cache
def _warn_unsandboxed(state: SandboxState) -> None:
    logger.warning("agent and verify commands run without the OS sandbox: %s", state.detail)
