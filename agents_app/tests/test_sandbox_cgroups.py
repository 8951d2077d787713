"""The cgroups a worker reuses between sandboxed commands (``sandbox_groups``), with the
real bubblewrap as root (as scripts/run.sh runs SF here): a reused set holds nothing of
the command before (no process, no limit it had), a fork bomb and a memory hog on it are
bounded by the next command's limits, and an OOM kill of one command is not reported
for the next. Also the end of a command without cgroups (SF not root): none of its
processes outlives ``sandboxed_run``."""

from __future__ import annotations

import os
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from agents_app.runtime import sandbox_groups
from agents_app.runtime.sandbox import CommandRun, SandboxPolicy, bwrap_problem, sandboxed_run
from agents_app.runtime.sandbox_limits import MIB, cgroup_members
from agents_app.schemas import SandboxLimits
from agents_app.tests import sandbox_users
from agents_app.tests.sandbox_users import BWRAP, ENV
from agents_app.tests.test_sandbox_containment import FORK_BOMB, TWO_HOGS

pytestmark = pytest.mark.skipif(
    bool(bwrap_problem(BWRAP)), reason="bubblewrap is required (scripts/setup.sh)"
)


@pytest.fixture
def worktree() -> Iterator[Path]:
    for place in sandbox_users.shared_place():
        (place / "wt").mkdir()
        yield place / "wt"


@pytest.fixture
def cgroups() -> sandbox_groups.CgroupSet:
    """The one set of cgroups this process keeps (skipped where SF gets none): the
    commands of a test run in it one after the other."""
    if os.geteuid() != 0:
        pytest.skip("cgroups: SF as root here")
    sandbox_users.ensure_sandbox_user()
    found = sandbox_groups.take(SandboxLimits())
    if found is None or found.pids is None or found.memory is None:
        pytest.skip("no writable pids and memory cgroups here")
    while sandbox_groups.pool_size():  # the others, of earlier tests, removed
        other = sandbox_groups.take(SandboxLimits())
        assert other is not None
        sandbox_groups._discard(other)
    sandbox_groups.give_back(found, emptied=True)
    return found


def run(worktree: Path, command: str, limits: SandboxLimits, timeout: float = 30) -> CommandRun:
    policy = SandboxPolicy(profile="normal", limits=limits)
    return sandboxed_run(command, worktree=worktree, policy=policy, env=ENV, timeout=timeout)


def reused(found: sandbox_groups.CgroupSet) -> bool:
    """Whether ``found`` is back in the pool, as the one set there."""
    kept = sandbox_groups.take(SandboxLimits())
    assert kept is not None
    sandbox_groups.give_back(kept, emptied=True)
    return kept is found and sandbox_groups.pool_size() == 1


def test_a_reused_cgroup_holds_no_process_and_no_limit_of_the_command_before(
    cgroups: sandbox_groups.CgroupSet, worktree: Path
) -> None:
    roomy = SandboxLimits(processes=4096, memory_mb=4096)
    done = run(worktree, "sleep 1000 & sleep 1000 & echo started", roomy)
    assert "started" in done.output
    assert reused(cgroups)
    assert [cgroup_members(group) for group in cgroups.paths] == [[], []]
    done = run(worktree, "echo second", SandboxLimits(processes=64, memory_mb=256))
    assert done.output == "second\n"
    assert cgroups.pids is not None
    assert cgroups.memory is not None
    assert (cgroups.pids / "pids.max").read_text().strip() == "64"
    assert int((cgroups.memory / _memory_limit_file(cgroups.memory)).read_text()) == 256 * MIB
    assert reused(cgroups)


def _memory_limit_file(group: Path) -> str:
    return "memory.max" if (group / "memory.max").exists() else "memory.limit_in_bytes"


def test_a_fork_bomb_on_a_reused_cgroup_is_bounded_by_its_own_limit(
    cgroups: sandbox_groups.CgroupSet, worktree: Path
) -> None:
    run(worktree, "true", SandboxLimits(processes=4096))
    refused = _refused_forks(cgroups)
    done = run(worktree, f"python3 -c '{FORK_BOMB}'", SandboxLimits(processes=64))
    assert reused(cgroups)
    # The group's own limit refused forks (RLIMIT_NPROC, the same number, counts one
    # process less: bwrap's outer process is outside the sandbox's user namespace).
    assert _refused_forks(cgroups) > refused
    assert done.exit_code == 1, done.output
    children = int(done.output.split("children ")[1].split()[0])
    assert 8 < children < 64, done.output
    assert "processes limit (64; the project policy's sandbox.processes)" in done.output


def _refused_forks(found: sandbox_groups.CgroupSet) -> int:
    assert found.pids is not None
    return int((found.pids / "pids.events").read_text().split()[1])


KILLED = "[sandbox] the command ran into its memory (the command's cgroup"


def test_a_memory_hog_on_a_reused_cgroup_is_bounded_and_named_for_that_command_only(
    cgroups: sandbox_groups.CgroupSet, worktree: Path
) -> None:
    run(worktree, "true", SandboxLimits(memory_mb=4096))
    done = run(worktree, f'python3 -c "{TWO_HOGS}"', SandboxLimits(memory_mb=160))
    assert "both survived" not in done.output
    assert KILLED in done.output, done.output
    # The same set next: the kill before is not this command's.
    after = run(worktree, f'python3 -c "{TWO_HOGS}"', SandboxLimits(memory_mb=512))
    assert reused(cgroups)
    assert "both survived" in after.output, after.output
    assert KILLED not in after.output


def test_a_pooled_set_with_a_process_or_a_refused_limit_gives_way_to_a_new_one(
    cgroups: sandbox_groups.CgroupSet, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Never a command without its cgroups because the pooled set could not be used.
    assert cgroups.pids is not None
    stray = subprocess.Popen(["sleep", "60"])
    try:
        (cgroups.pids / "cgroup.procs").write_text(str(stray.pid))
        taken = sandbox_groups.take(SandboxLimits())
        assert taken is not None
        assert taken is not cgroups
        sandbox_groups.give_back(taken, emptied=True)
    finally:
        stray.kill()
        stray.wait()
    limit = sandbox_groups._limit

    def refused(found: sandbox_groups.CgroupSet, limits: SandboxLimits) -> None:
        if found is taken:
            raise OSError(16, "Device or resource busy")
        limit(found, limits)

    monkeypatch.setattr(sandbox_groups, "_limit", refused)
    again = sandbox_groups.take(SandboxLimits(processes=99))
    assert again is not None
    assert again is not taken
    assert again.pids is not None
    assert (again.pids / "pids.max").read_text().strip() == "99"
    sandbox_groups.give_back(again, emptied=True)


def test_a_forked_process_never_uses_its_parents_cgroups(
    cgroups: sandbox_groups.CgroupSet,
) -> None:
    # Two processes in one group: the end of one command would kill the other's.
    child = os.fork()
    if child == 0:
        os._exit(0 if sandbox_groups.pool_size() == 0 else 1)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert sandbox_groups.pool_size() == 1


def test_without_cgroups_no_process_of_a_timed_out_command_outlives_it(
    worktree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As SF runs when it is not root: no cgroup to empty. A timeout kills bwrap; the
    # sandbox's processes die with it, asynchronously; sandboxed_run returns once the
    # sandbox's process 1 (which outlives all of them) has exited.
    monkeypatch.setattr(sandbox_groups, "_roots", lambda: (None, None))
    if os.geteuid() == 0:
        sandbox_users.ensure_sandbox_user()
    tag = str(uuid.uuid4().int % 10**8)
    # A loop that keeps writing into the worktree, as a command left behind would
    # while SF's git ran next on it.
    command = f"(while :; do echo x >> {worktree}/log; done) & sleep 1000.{tag}"
    done = run(worktree, command, SandboxLimits(), timeout=1)
    size = (worktree / "log").stat().st_size
    assert done.exit_code is None
    assert [pid for pid in os.listdir("/proc") if pid.isdigit() and tag in _cmdline(pid)] == []
    time.sleep(0.2)
    assert (worktree / "log").stat().st_size == size


def _cmdline(pid: str) -> str:
    try:
        return Path("/proc", pid, "cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return ""
