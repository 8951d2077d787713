"""The sweep of left-behind sandbox cgroups never removes one a command has just made.

Seen under two test workers as root: one command's sweep removed the other's new
(still empty) pids group before its wrapper joined it, and that command failed with
"cgroup.procs: Directory nonexistent" (exit 125). Empty directories stand in for the
groups here: the sweep removes a group with ``rmdir`` as it would one of these.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from agents_app.runtime import sandbox_limits
from agents_app.runtime.sandbox_limits import CGROUP_SWEEP_AFTER, CGROUP_SWEEP_AT, POOL_PREFIX


def test_the_sweep_removes_old_groups_and_keeps_new_ones(tmp_path: Path) -> None:
    old = time.time() - CGROUP_SWEEP_AFTER - 5
    left = [tmp_path / f"left-{n}" for n in range(CGROUP_SWEEP_AT)]
    new = [tmp_path / f"new-{n}" for n in range(3)]
    for group in left + new:
        group.mkdir()
    for group in left:
        os.utime(group, (old, old))
    sandbox_limits.sweep(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in new)


def test_no_sweep_below_the_threshold(tmp_path: Path) -> None:
    old = time.time() - CGROUP_SWEEP_AFTER - 5
    for n in range(CGROUP_SWEEP_AT - 1):
        (tmp_path / f"left-{n}").mkdir()
        os.utime(tmp_path / f"left-{n}", (old, old))
    sandbox_limits.sweep(tmp_path)
    assert len(list(tmp_path.iterdir())) == CGROUP_SWEEP_AT - 1


def test_the_sweep_spares_the_pool_of_a_live_process(tmp_path: Path) -> None:
    # A worker keeps its cgroups empty between commands (sandbox_groups): another
    # worker's sweep removed them, and the next command failed to join its group.
    old = time.time() - CGROUP_SWEEP_AFTER - 5
    dead = subprocess.Popen(["true"])  # its pid: a process no longer alive
    dead.wait()
    kept = tmp_path / f"{POOL_PREFIX}{os.getpid()}-abcd-0"
    gone = tmp_path / f"{POOL_PREFIX}{dead.pid}-abcd-0"
    for group in [kept, gone, *(tmp_path / f"left-{n}" for n in range(CGROUP_SWEEP_AT))]:
        group.mkdir()
        os.utime(group, (old, old))
    sandbox_limits.sweep(tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == [kept.name]
