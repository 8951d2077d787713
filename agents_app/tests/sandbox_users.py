"""Running sandboxed commands with bwrap started by root (as scripts/run.sh does on this
machine) or by an ordinary user (``sfsandboxtest``, created when missing; bwrap started
through ``setpriv --reuid``): the containment and egress tests run both ways. As root,
SF starts bwrap as its unprivileged ``SF_SANDBOX_USER`` (created here when missing, as
scripts/setup.sh does); as the ordinary user, bwrap is that user's, without the
wrapper (the filter handed over open), as SF runs it when it is not root."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings

from agents_app.runtime import sandbox_user
from agents_app.runtime.egress import egress_for
from agents_app.runtime.sandbox import (
    CommandRun,
    Launch,
    SandboxPolicy,
    egress_hosts,
    group_run,
    sandbox_argv,
    sandboxed_run,
    seccomp_fd,
    sf_own_paths,
)
from agents_app.runtime.sandbox_limits import limit_note

TEST_USER = "sfsandboxtest"
BWRAP = "/usr/bin/bwrap"
ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}
USERS = ["root", TEST_USER]


def ensure_test_user() -> pwd.struct_passwd | None:
    try:
        return pwd.getpwnam(TEST_USER)
    except KeyError:
        pass
    if os.geteuid() != 0:
        return None
    subprocess.run(
        ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", TEST_USER],
        check=True,
    )
    return pwd.getpwnam(TEST_USER)


def ensure_sandbox_user() -> None:
    """The user bwrap runs as when SF is root (scripts/setup.sh creates it)."""
    name = str(settings.SF_SANDBOX_USER)
    try:
        pwd.getpwnam(name)
    except KeyError:
        subprocess.run(
            [
                "useradd",
                "--system",
                "--user-group",
                "--no-create-home",
                "--shell",
                "/usr/sbin/nologin",
                name,
            ],
            check=True,
        )
    sandbox_user._lookup.cache_clear()


def chosen_user(request: pytest.FixtureRequest) -> str:
    """The ``user`` fixture's value: ``root`` or ``sfsandboxtest``, skipped where the
    test process cannot be that user."""
    if request.param == "root" and os.geteuid() != 0:
        pytest.skip("the test process is not root")
    if request.param == "root":
        ensure_sandbox_user()
    if request.param == TEST_USER and (os.geteuid() != 0 or ensure_test_user() is None):
        pytest.skip(f"running bwrap as {TEST_USER} needs root to switch to it")
    return str(request.param)


def shared_place() -> Iterator[Path]:
    """A directory both users can reach (pytest's tmp_path is root's, mode 0700)."""
    path = Path(tempfile.mkdtemp(prefix="sf-containment-", dir="/tmp"))
    path.chmod(0o755)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def own(user: str, path: Path) -> None:
    if user != "root":
        subprocess.run(["chown", "-R", f"{TEST_USER}:", str(path)], check=True)


def become(user: str) -> list[str]:
    """What starts the rest of a command line as ``user`` (nothing for root)."""
    if user == "root":
        return []
    entry = pwd.getpwnam(user)
    return ["setpriv", f"--reuid={entry.pw_uid}", f"--regid={entry.pw_gid}", "--clear-groups"]


def contained(user: str, worktree: Path, command: str, policy: SandboxPolicy) -> CommandRun:
    """``command`` in the sandbox, with bwrap started by ``user``; with an egress grant,
    behind SF's proxy (its socket handed to ``user``, who runs SF's bwrap here)."""
    if user == "root":
        done = sandboxed_run(command, worktree=worktree, policy=policy, env=ENV, timeout=30)
        assert done.sandboxed
        return done
    home = Path("/home") / user  # need not exist: the sandbox makes it an empty tmpfs
    setpriv = become(user)
    fd = seccomp_fd()
    with egress_for(egress_hosts(policy)) as proxy:
        if proxy is not None:
            own(user, proxy.directory)
        argv = sandbox_argv(
            command,
            worktree=worktree,
            policy=policy,
            bwrap=BWRAP,
            home=home,
            hidden=sf_own_paths(),
            launch=Launch(seccomp_fd=fd, proxy=proxy),  # no wrapper, as SF starts it
        )
        code, output = group_run(
            [*setpriv, *argv], cwd=worktree, env=ENV, timeout=30, pass_fds=(fd,)
        )
    os.close(fd)
    note = limit_note(code, output, policy.limits)
    output = f"{output.rstrip()}\n{note}\n" if note else output
    if proxy is not None:
        output = proxy.traced(output)
    return CommandRun(code, output, 0.0, True)
