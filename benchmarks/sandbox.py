"""What the OS sandbox adds to each command (agents_app/runtime/sandbox.py).

For ``true``, ``git status`` and ``python3 -c pass`` in a linked git worktree, 200 runs
each (``--runs``), interleaved so that every variant sees the same load:

* ``none``: ``bash -c COMMAND`` as a process group (``group_run``), no sandbox;
* ``old``: the sandbox argv of main before issue 27 (a copy kept here, only here):
  the host's root read-only, the network and PID namespaces, no user namespace;
* ``before``: the sandbox of main before the unprivileged host user (issue 27's
  follow-up): the ``sh`` wrapper always (it opens the seccomp filter and joins the
  cgroups), bwrap started by SF's own user (root here), a pids and a memory cgroup
  made per command and removed once empty;
* ``new``: ``sandboxed_run`` as SF runs it: the seccomp filter, the user namespace, the
  file allowlist, the limits (ulimit in the command's bash); as root a pids and a memory
  cgroup from the worker's pool (the ``sh`` wrapper joins them; ``sandbox_groups``) and
  bwrap started as the unprivileged ``SF_SANDBOX_USER`` (``setpriv``);
* ``new_nocg``: ``new`` without cgroups, as SF runs when it is not root: no wrapper,
  the filter handed over open, the end waited for on the sandbox's process 1 (as root
  here, still through ``setpriv``).

``*_added_p95_ms`` is the p95 of a variant less the p95 of the same command without the
sandbox; the target is ``new_true_added_p95_ms`` ≤ 15 ms. Needs bubblewrap; team mode
(.sf/env) only for Django's settings.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from _common import django_team_mode, parse_args, percentile, report, throwaway_repo

django_team_mode()

from django.conf import settings  # noqa: E402

from agents_app.runtime import sandbox_groups  # noqa: E402
from agents_app.runtime.sandbox import (  # noqa: E402
    Launch,
    SandboxPolicy,
    group_run,
    home_dir,
    sandbox_argv,
    sandbox_state,
    sandboxed_run,
    sf_own_paths,
)
from agents_app.runtime.sandbox_limits import (  # noqa: E402
    memory_cgroup,
    pids_cgroup,
    pids_cgroup_empty,
    pids_cgroup_remove,
)

COMMANDS = {"true": "true", "git_status": "git status --short", "python": "python3 -c pass"}
ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}
POLICY = SandboxPolicy(profile="normal")


def old_argv(command: str, worktree: Path, bwrap: str) -> list[str]:
    """The argv of main's sandbox before issue 27 (simplified: its git binds)."""
    argv = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    argv += ["--tmpfs", "/tmp", "--tmpfs", "/var/tmp", "--tmpfs", "/run"]
    for path in (home_dir(), *sf_own_paths()):
        if path is not None and path.resolve().is_dir():
            argv += ["--tmpfs", str(path.resolve())]
    argv += ["--bind", str(worktree), str(worktree)]
    common = worktree.parent / "repo" / ".git"
    argv += ["--ro-bind", str(common), str(common)]
    for path in (common / "objects", common / "worktrees" / worktree.name):
        argv += ["--bind", str(path), str(path)]
    argv += ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    argv += ["--unshare-net", "--die-with-parent", "--new-session", "--chdir", str(worktree)]
    return [*argv, "--setenv", "TMPDIR", "/tmp", "bash", "-c", command]


def variants(worktree: Path, bwrap: str) -> dict[str, Callable[[str], object]]:
    def none(command: str) -> object:
        return group_run(["bash", "-c", command], cwd=worktree, env=ENV, timeout=30)

    def old(command: str) -> object:
        return group_run(old_argv(command, worktree, bwrap), cwd=worktree, env=ENV, timeout=30)

    def before(command: str) -> object:
        made = (pids_cgroup(POLICY.limits), memory_cgroup(POLICY.limits))
        groups = [group for group in made if group is not None]
        try:
            argv = sandbox_argv(
                command,
                worktree=worktree,
                policy=POLICY,
                bwrap=bwrap,
                home=home_dir(),
                hidden=sf_own_paths(),
                launch=Launch(cgroup=groups),
            )
            code, output = group_run(argv, cwd=worktree, env=ENV, timeout=30)
        finally:
            if groups:  # not left behind for the sweep
                pids_cgroup_empty(groups[0])
            for group in groups:
                pids_cgroup_remove(group)
        assert code == 0, output
        return code

    def new(command: str) -> object:
        done = sandboxed_run(command, worktree=worktree, policy=POLICY, env=ENV, timeout=30)
        assert done.exit_code == 0, done.output
        return done

    def new_nocg(command: str) -> object:
        roots = sandbox_groups._roots
        sandbox_groups._roots = lambda: (None, None)
        try:
            return new(command)
        finally:
            sandbox_groups._roots = roots

    return {"none": none, "old": old, "before": before, "new": new, "new_nocg": new_nocg}


def measure(worktree: Path, runs: int) -> dict[str, dict[str, list[float]]]:
    state = sandbox_state()
    assert state.sandboxed, state.detail
    runners = variants(worktree, state.bwrap)
    times: dict[str, dict[str, list[float]]] = {v: {c: [] for c in COMMANDS} for v in runners}
    for _ in range(runs + 5):  # the first 5 are a warm-up
        for name, command in COMMANDS.items():
            for variant, run in runners.items():
                started = time.perf_counter()
                run(command)
                times[variant][name].append(time.perf_counter() - started)
    return {v: {c: values[5:] for c, values in by.items()} for v, by in times.items()}


def figures(times: dict[str, dict[str, list[float]]]) -> dict[str, float]:
    out: dict[str, float] = {}
    for variant, by_command in times.items():
        for command, values in by_command.items():
            out[f"{variant}_{command}_p50_ms"] = round(statistics.median(values) * 1000, 2)
            out[f"{variant}_{command}_p95_ms"] = round(percentile(values, 0.95) * 1000, 2)
    for variant in ("old", "before", "new", "new_nocg"):
        for command in COMMANDS:
            added = out[f"{variant}_{command}_p95_ms"] - out[f"none_{command}_p95_ms"]
            out[f"{variant}_{command}_added_p95_ms"] = round(added, 2)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    args = parse_args(parser, smoke={"runs": 3})
    place = Path(tempfile.mkdtemp(prefix="sf-bench-sandbox-"))
    try:
        (place / "repo").mkdir()
        repo = throwaway_repo(place / "repo")
        (repo / "README").write_text("bench\n")
        worktree = place / "wt"
        git = ["git", "-C", str(repo), "worktree", "add", "-q", "-b", "sf/p1/k/1", str(worktree)]
        subprocess.run(git, check=True)
        times = measure(worktree, args.runs)
    finally:
        shutil.rmtree(place, ignore_errors=True)
    result: dict[str, object] = {**figures(times)}
    result |= {"runs": args.runs, "load1": round(os.getloadavg()[0], 2)}
    result["root"] = os.geteuid() == 0
    result["sandbox_ro_paths"] = len(settings.SF_SANDBOX_RO_PATHS)
    result["sandbox_user"] = str(settings.SF_SANDBOX_USER) if os.geteuid() == 0 else ""
    for variant in ("old", "before", "new", "new_nocg"):
        print(f"{variant}: true p95 +{result[f'{variant}_true_added_p95_ms']} ms")
    report(result)


if __name__ == "__main__":
    main()
