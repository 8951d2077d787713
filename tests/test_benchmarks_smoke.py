"""Every script in benchmarks/ still runs: each once with ``--smoke`` (a tiny run of the
whole script, its figures meaningless), so that none rots unseen between the times
someone measures with it.

Every ``benchmarks/*.py`` not starting with ``_`` is in ``SMOKE`` or in ``EXCLUDED``
with the reason (a test checks it): a new script is smoke-run or says why not. They run
as the programs they are, against the test database and Redis, each with its own Celery
queue and channel prefix, a few at a time (most of their time is spent waiting for the
processes they start). Their contract is the last line: one JSON object.

Nothing a script starts may outlive it. Each run is tagged (``SF_SMOKE_RUN`` in its
environment, which every process it starts inherits, in whatever session or group):
a process still carrying the tag once the script has ended is named, and the run fails;
at a timeout the script gets SIGTERM (benchmarks/_processes.py: its ``finally`` blocks
stop what it started), then its group SIGKILL, then every process with its tag.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import psycopg
import pytest
from django.db import connection

from tests.processes import ROOT, child_database_url, maintenance_dsn, pristine_name, wait_for

BENCHMARKS = ROOT / "benchmarks"
SCRIPTS = sorted(p.name for p in BENCHMARKS.glob("*.py") if not p.name.startswith("_"))
HELPERS = sorted(p.stem for p in BENCHMARKS.glob("_*.py"))
# Each script's smoke arguments, the slowest first (the pool starts them in this order,
# so that a long one does not start last). Seconds measured are in docs/testing.md.
SMOKE: dict[str, list[str]] = {
    script: ["--smoke"]
    for script in (
        "chaos.py",
        "scale.py",
        "fanout.py",
        "dispatch.py",
        "pageload.py",
        "api.py",
        "merge_queue.py",
        "tool_overhead.py",
        "badge_latency.py",
        "live_model.py",
        "gate.py",
        "harness_compare.py",
        "scheduler.py",
        "record_trajectory.py",
        "doctor_gate.py",
        "board.py",
        "sandbox.py",
        "skills.py",
        "egress.py",
        "native.py",
    )
}
# A script left out of the smoke run, and why (none today).
EXCLUDED: dict[str, str] = {}
AT_ONCE = 4
TIMEOUT_S = 600  # each; a busy 2-core machine starts Django in tens of seconds
GRACE_S = 30  # from SIGTERM to SIGKILL: a script's finally stops a web server in 20 s
TAG = "SF_SMOKE_RUN"


@dataclass
class Outcome:
    name: str
    code: int  # -1: timed out; -2: left a process running
    output: str
    errors: str
    seconds: float


def run_smoke(script: str) -> Outcome:
    name = Path(script).stem.replace("_", "-")
    url = child_database_url(f"smoke-{name}")
    head, _, tail = url.rpartition("?")
    data = Path(os.environ["SF_DATA_DIR"]) / f"smoke-{name}"
    data.mkdir(parents=True, exist_ok=True)
    env = {
        # Its own copy of the test database (``own_databases``): one script's workers
        # and sweeps never touch another's sessions.
        "DATABASE_URL": f"{head}_{database_suffix(script)}?{tail}",
        # And its own data folder: worktrees are named by ids, the same in every copy.
        "SF_DATA_DIR": str(data),
        "SF_CELERY_QUEUE": f"{os.environ['SF_CELERY_QUEUE']}-smoke-{name}",
        "SF_CHANNELS_PREFIX": f"{os.environ['SF_CHANNELS_PREFIX']}-smoke-{name}",
    }
    command = [sys.executable, f"benchmarks/{script}", *SMOKE[script]]
    return run_tagged(script, command, env, TIMEOUT_S)


def database_suffix(script: str) -> str:
    return "smoke_" + Path(script).stem


@contextlib.contextmanager
def own_databases(scripts: list[str]) -> Iterator[None]:
    """A copy of the test database for each script (``CREATE DATABASE … TEMPLATE``, a
    file copy: a second or so each), dropped after. Scripts that share one database see
    each other's work: a worker's sweep of one ended the units another replayed
    (tool_overhead.py timed no call beside dispatch.py and fanout.py)."""
    # Not the test database itself: by now other processes of the run hold sessions on
    # it (the browser tests' web server keeps a pool), and PostgreSQL copies only a
    # database nobody is connected to. Its copy made when it was set up (conftest.py).
    name = connection.settings_dict["NAME"]
    template = pristine_name(name)
    copies = [f"{name}_{database_suffix(script)}" for script in scripts]
    with psycopg.connect(maintenance_dsn(), autocommit=True) as admin:
        for copy in copies:
            admin.execute(f'DROP DATABASE IF EXISTS "{copy}" WITH (FORCE)')
            admin.execute(f'CREATE DATABASE "{copy}" TEMPLATE "{template}"')
        try:
            yield
        finally:
            for copy in copies:
                admin.execute(f'DROP DATABASE IF EXISTS "{copy}" WITH (FORCE)')


def run_tagged(name: str, command: list[str], env: dict[str, str], timeout: float) -> Outcome:
    """Run ``command`` in a group of its own, tagged; end everything it started. Its
    output goes to files, not pipes: a process it left holding a pipe would keep the
    read waiting after the script itself has ended."""
    tag = uuid.uuid4().hex
    started = time.monotonic()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        process = subprocess.Popen(
            command,
            cwd=ROOT,
            env={**os.environ, **env, "PYTHONUNBUFFERED": "1", TAG: tag},
            stdout=out,
            stderr=err,
            text=True,
            start_new_session=True,
        )
        code = wait_or_end(process, timeout)
        left = end_tree(process.pid, tag)
        output, errors = (_read(file) for file in (out, err))
    if code is None:
        errors += f"\ntimed out after {timeout:g} s; left running (ended here): {left}"
        return Outcome(name, -1, output, errors, time.monotonic() - started)
    if left:
        errors += f"\nleft running after it exited (ended here): {left}"
        return Outcome(name, -2, output, errors, time.monotonic() - started)
    return Outcome(name, code, output, errors, time.monotonic() - started)


def wait_or_end(process: subprocess.Popen[str], timeout: float) -> int | None:
    """Its exit code; None when it ran out of time: then SIGTERM to its group (its
    ``finally`` blocks stop what it started), SIGKILL ``GRACE_S`` later."""
    try:
        return process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        pass
    for number, grace in ((signal.SIGTERM, GRACE_S), (signal.SIGKILL, None)):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, number)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=grace)
            break
    return None


def _read(file: IO[str]) -> str:
    file.seek(0)
    return file.read()


def end_tree(group: int, tag: str) -> list[str]:
    """SIGKILL every process of ``group`` and every process tagged ``tag`` (a server in
    a session of its own is outside the group); their command lines."""
    left = {pid: command for pid, command in processes() if _in_run(pid, group, tag)}
    for pid in left:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(group, signal.SIGKILL)
    return sorted(left.values())


def processes() -> list[tuple[int, str]]:
    """Every live process but this one: pid and command line (zombies have none)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        with contextlib.suppress(OSError):
            command = Path(f"/proc/{entry}/cmdline").read_text().replace("\0", " ").strip()
            if command:
                found.append((int(entry), command[:160]))
    return found


def _in_run(pid: int, group: int, tag: str) -> bool:
    try:
        if os.getpgid(pid) == group:
            return True
        return f"{TAG}={tag}".encode() in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:  # gone meanwhile, or not ours to read
        return False


def last_line_json(output: str) -> dict[str, object] | None:
    """The contract: the last line a script prints is one JSON object."""
    lines = output.strip().splitlines()
    try:
        figures = json.loads(lines[-1]) if lines else None
    except ValueError:
        return None
    return figures if isinstance(figures, dict) else None


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_every_benchmark_runs_in_smoke_mode() -> None:
    started = time.monotonic()
    # By hand, some of them: SF_SMOKE_ONLY=fanout.py,api.py
    only = [name for name in os.environ.get("SF_SMOKE_ONLY", "").split(",") if name]
    scripts = only or list(SMOKE)
    with own_databases(scripts), ThreadPoolExecutor(AT_ONCE) as pool:
        results = list(pool.map(run_smoke, scripts))
    times = [f"{r.name}\t{r.code}\t{r.seconds:.1f}" for r in results]
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    total = f"total\t\t{time.monotonic() - started:.1f}\tload {load}"
    log = ROOT / ".sf" / "test-logs" / "benchmarks-smoke.tsv"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("\n".join([*times, total]) + "\n")
    print("\n".join([*times, total]))
    failures = [
        f"--- {r.name} (exit {r.code}, {r.seconds:.0f} s): {r.output[-1500:]}\n{r.errors[-3000:]}"
        for r in results
        if r.code != 0 or last_line_json(r.output) is None
    ]
    assert not failures, "\n".join(failures)


def test_every_script_is_smoke_run_or_excluded_with_a_reason() -> None:
    assert len(SCRIPTS) >= 18, SCRIPTS
    missing = sorted(set(SCRIPTS) - set(SMOKE) - set(EXCLUDED))
    assert missing == [], f"add to SMOKE (or to EXCLUDED with the reason): {missing}"
    assert sorted(set(SMOKE) | set(EXCLUDED)) == SCRIPTS, "a script named here is gone"
    assert not set(SMOKE) & set(EXCLUDED)
    assert all(reason.strip() for reason in EXCLUDED.values())


def test_every_helper_of_the_benchmarks_runs_in_some_smoke_run() -> None:
    """The smoke runs cover a helper module (``benchmarks/_*.py``) only if a script
    imports it, directly or through another helper: one that none does would rot unseen."""
    imports = {
        path.stem: set(re.findall(r"^\s*(?:from|import) (_\w+)", path.read_text(), re.M))
        for path in BENCHMARKS.glob("*.py")
    }
    reached = {Path(script).stem for script in SMOKE}
    while True:
        more = set().union(*(imports[name] for name in reached)) & set(HELPERS)
        if more <= reached:
            break
        reached |= more
    assert sorted(set(HELPERS) - reached) == []


# Starts a "server" in a session of its own (where the run's group does not reach), says
# its pid, then exits at once or hangs.
LEAVER = """
import subprocess, sys, time
server = subprocess.Popen(["sleep", "600"], start_new_session=True)
print(server.pid, flush=True)
if sys.argv[1] == "hangs":
    time.sleep(600)
"""


def gone(pid: int) -> bool:
    """Not running: ended, or a zombie no one has reaped yet."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


@pytest.mark.parametrize("ending", ["exits", "hangs"])
def test_what_a_smoke_run_leaves_running_is_named_and_ended(ending: str) -> None:
    outcome = run_tagged("leaver", [sys.executable, "-c", LEAVER, ending], {}, timeout=5)
    server = int(outcome.output.split()[0])
    assert outcome.code == {"exits": -2, "hangs": -1}[ending], outcome
    assert "sleep 600" in outcome.errors
    wait_for(lambda: gone(server), timeout=10, what=f"the left server ({server}) to end")


# A benchmark as benchmarks/_processes.py makes them: its server in a group of its own.
BENCHMARK = """
import subprocess, sys, time
sys.path.insert(0, "benchmarks")
import _common
from _processes import start
try:
    server = start(["sleep", "600"], own_group=True, stdout=subprocess.DEVNULL)
    print(server.pid, flush=True)
    time.sleep(600)
finally:
    print("unwound", flush=True)
"""


@pytest.mark.parametrize("ending", [signal.SIGTERM, signal.SIGKILL])
def test_a_benchmark_ended_by_a_signal_stops_the_server_it_started(ending: int) -> None:
    """SIGTERM unwinds the script (its ``finally`` runs, then ``atexit``); SIGKILL runs
    nothing of it, and the kernel tells the server (``PR_SET_PDEATHSIG``)."""
    command = [sys.executable, "-c", BENCHMARK]
    with subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True) as script:
        assert script.stdout is not None
        server = int(script.stdout.readline())
        assert not gone(server)
        script.send_signal(ending)
        rest = script.stdout.read()
        code = script.wait(timeout=60)
    try:
        wait_for(lambda: gone(server), timeout=30, what=f"the server ({server}) to end")
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server, signal.SIGKILL)
    if ending == signal.SIGTERM:
        assert (code, rest) == (128 + signal.SIGTERM, "unwound\n")
    else:
        assert code == -signal.SIGKILL
