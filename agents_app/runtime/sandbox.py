"""The OS sandbox around agent and verify commands: the second wall behind the gate.

The gate (``agents_app.gate``) decides a command from its text; this module makes
sure that what the command then does stays small whatever the gate missed. With
bubblewrap (Debian's ``bubblewrap``, ``bwrap``) a command sees:

- the whole system read-only, with a private ``/tmp`` and ``/dev``, its own ``/proc``
  and a PID namespace: when the command returns, every process it left behind
  (``sleep 1000 &``, a daemon that called ``setsid``) dies with the namespace;
- ``$HOME`` as an empty tmpfs (``~/.ssh``, tokens and dotfiles are unreadable), and
  SF's own checkout and data directory hidden the same way, unless they hold the
  worktree;
- the worktree writable, and of the repository's ``.git`` only what ``git add`` and
  ``git commit`` in a worktree write: the objects, the worktree's own admin directory
  and the directory of its branch's ref. The rest of ``.git`` (config, hooks, the
  other branches) is read-only, so a command cannot plant a hook or a
  ``core.fsmonitor`` that SF's own git calls would run outside the sandbox;
- a network namespace of its own, always (``--unshare-net``, and ``/run`` hidden so
  that no Unix socket of a local server is reachable either); a project's egress
  list adds SF's filtering proxy as its only way out (``agents_app.runtime.egress``).

Every command, sandboxed or not, runs in a process group of its own; the group is
killed when the command returns, times out or the caller is interrupted, and
``--die-with-parent`` kills the sandbox if the worker that ran it dies.
"""

from __future__ import annotations

import contextlib
import logging
import os
import select
import signal
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import IO, Literal

from django.conf import settings

from agents_app.axes import profile_rank
from agents_app.runtime.egress import bridge_problem, egress_for

logger = logging.getLogger("sf.sandbox")

SANDBOX_MODES = ("bwrap", "off")
# Read at most this many bytes from each end of a command's output.
OUTPUT_READ_BYTES = 64 * 1024
PROBE_TIMEOUT_S = 10
# Profiles above this rank run only in a sandbox (or with SF_SANDBOX=off).
HIGHEST_UNSANDBOXED_PROFILE = "normal"


@dataclass(frozen=True)
class SandboxPolicy:
    """What one command may do beyond its worktree (nothing by default), and the
    session's profile it runs under. ``egress``: the hosts it may reach through SF's
    filtering proxy (``agents_app.runtime.egress``); ``network`` is on exactly when
    there are some: the sandbox never shares the host's network."""

    network: bool = False
    profile: str = "restricted"
    egress: tuple[str, ...] = ()


def policy_for(profile: str, egress: Sequence[str]) -> SandboxPolicy:
    """The project's egress list; the ``unrestricted`` profile is ``*`` (every public
    host, still through the proxy: never loopback or a private address)."""
    hosts = ("*",) if profile == "unrestricted" else tuple(egress)
    return SandboxPolicy(network=bool(hosts), profile=profile, egress=hosts)


class SandboxRefused(Exception):
    """A command under a profile above ``normal`` while the sandbox is unavailable."""


@dataclass(frozen=True)
class SandboxState:
    """How commands run on this host: ``bwrap`` (sandboxed), ``off`` (the operator
    opted out) or ``unavailable`` (bwrap missing or unable to create namespaces)."""

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
    """Why ``bwrap`` cannot sandbox here ('' when it can): missing, or no namespaces."""
    if not os.access(bwrap, os.X_OK):
        return f"bubblewrap is not installed at {bwrap} (SF_SANDBOX_BWRAP)"
    probe = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    probe += ["--unshare-pid", "--unshare-net", "--die-with-parent", "true"]
    try:
        done = subprocess.run(
            probe, capture_output=True, text=True, timeout=PROBE_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{bwrap} cannot run: {exc}"
    if done.returncode != 0:
        lines = (done.stderr.strip() or f"exit {done.returncode}").splitlines()
        return f"{bwrap} cannot create namespaces here: {lines[-1]}"
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


def sandbox_argv(
    command: str,
    *,
    worktree: Path,
    policy: SandboxPolicy,
    bwrap: str,
    cwd: Path | None = None,
    home: Path | None = None,
    hidden: Sequence[Path] = (),
) -> list[str]:
    """The argv that runs ``bash -c command`` in the sandbox."""
    prefix = sandbox_prefix(
        worktree=worktree, policy=policy, bwrap=bwrap, cwd=cwd, home=home, hidden=hidden
    )
    return [*prefix, "bash", "-c", command]


def sandbox_prefix(
    *,
    worktree: Path,
    policy: SandboxPolicy,
    bwrap: str,
    cwd: Path | None = None,
    home: Path | None = None,
    hidden: Sequence[Path] = (),
    expose: Sequence[Path] = (),
) -> list[str]:
    """The bwrap argv up to the program it runs. Mounts apply in order: what is hidden
    first, then what is ``expose``d read-only over it (an MCP server installed under
    ``$HOME``), then the worktree and git's directories."""
    worktree = worktree.resolve()
    argv = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    argv += ["--tmpfs", "/tmp", "--tmpfs", "/var/tmp"]
    argv += ["--tmpfs", "/run"]  # Unix sockets of local servers (PostgreSQL, Docker)
    for path in _hidden_paths(home, hidden):
        argv += ["--tmpfs", str(path)]
    for path in expose:
        argv += ["--ro-bind", str(path), str(path)]
    argv += ["--bind", str(worktree), str(worktree)]
    argv += git_binds(worktree)
    argv += ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    argv.append("--unshare-net")  # egress, if any, is through SF's proxy (egress.py)
    argv += ["--die-with-parent", "--new-session", "--chdir", str(cwd or worktree)]
    if home is not None:
        argv += ["--setenv", "HOME", str(home)]
    return [*argv, "--setenv", "TMPDIR", "/tmp"]


def _hidden_paths(home: Path | None, hidden: Sequence[Path]) -> list[Path]:
    paths = []
    for path in (home, *hidden):
        if path is None:
            continue
        resolved = path.resolve()
        if resolved != Path("/") and resolved.is_dir() and resolved not in paths:
            paths.append(resolved)
    return sorted(paths, key=lambda p: len(p.parts))  # a parent before its children


def git_binds(worktree: Path) -> list[str]:
    """What git in ``worktree`` needs writable; hooks and config stay read-only."""
    dotgit = worktree / ".git"
    if dotgit.is_dir():  # a main checkout: all of it is writable but hooks and config
        return [
            arg
            for name in ("hooks", "config")
            if (dotgit / name).exists()
            for arg in ("--ro-bind", str(dotgit / name), str(dotgit / name))
        ]
    if not dotgit.is_file():
        return []
    admin = _gitdir_of(dotgit)
    if admin is None:
        return []
    common = _common_dir(admin)
    argv = ["--ro-bind", str(common), str(common)]
    writable = [common / "objects", admin]
    branch = _branch_of(admin)
    if branch:
        # The directory of the branch's loose ref and of its reflog: git writes
        # ``<ref>.lock`` beside the ref, then renames it over.
        writable += [(common / "refs/heads" / branch).parent]
        writable += [(common / "logs/refs/heads" / branch).parent]
    for path in writable:
        path.mkdir(parents=True, exist_ok=True)
        argv += ["--bind", str(path), str(path)]
    return argv


def _gitdir_of(dotgit: Path) -> Path | None:
    text = dotgit.read_text(encoding="utf-8", errors="replace").strip()
    if not text.startswith("gitdir:"):
        return None
    admin = Path(text.removeprefix("gitdir:").strip())
    admin = (dotgit.parent / admin).resolve()
    return admin if admin.is_dir() else None


def _common_dir(admin: Path) -> Path:
    pointer = admin / "commondir"
    if not pointer.is_file():
        return admin
    return (admin / pointer.read_text(encoding="utf-8").strip()).resolve()


def _branch_of(admin: Path) -> str:
    head = (admin / "HEAD").read_text(encoding="utf-8", errors="replace").strip()
    ref = head.removeprefix("ref: ").strip() if head.startswith("ref: ") else ""
    if not ref.startswith("refs/heads/") or ".." in ref.split("/"):
        return ""
    return ref.removeprefix("refs/heads/")


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
    if state.sandboxed:
        argv = sandbox_argv(
            command,
            worktree=worktree,
            policy=policy,
            bwrap=state.bwrap,
            cwd=cwd,
            home=home_dir(),
            hidden=sf_own_paths(),
        )
        env = dict(env)
    else:
        _warn_unsandboxed(state)
        argv = ["bash", "-c", command]
        env = {**env, "HOME": str(worktree)}
    started = time.monotonic()
    # With egress, the command's only way out is SF's proxy, for as long as it runs.
    hosts = egress_hosts(policy) if state.sandboxed else ()
    if hosts and bridge_problem():
        raise SandboxRefused(bridge_problem())
    with egress_for(hosts) as proxy:
        if proxy is not None:  # its binds and the bridge, before ``bash -c command``
            argv[-3:-3] = [*proxy.bwrap_args(), *proxy.bridge_argv()]
        exit_code, output = group_run(argv, cwd=cwd or worktree, env=env, timeout=timeout)
    if proxy is not None:  # each request into the unit's trace, with the output
        output = proxy.traced(output)
    return CommandRun(exit_code, output, time.monotonic() - started, state.sandboxed)


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


def group_run(
    argv: list[str], *, cwd: Path, env: Mapping[str, str], timeout: float
) -> tuple[int | None, str]:
    """Run ``argv`` as the leader of a new session; wait up to ``timeout``; then kill
    the whole process group, whether the command finished, timed out or we were
    interrupted. Output goes to a file, so a background process that keeps the
    descriptor open cannot make us wait for it. Returns (exit code or None, output)."""
    with tempfile.TemporaryFile() as out:
        process = subprocess.Popen(
            argv,
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
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
