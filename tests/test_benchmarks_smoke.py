"""Every script in benchmarks/ still runs: each once with ``--smoke`` (a tiny run of the
whole script, its figures meaningless), so that none rots unseen between the times
someone measures with it.

The scripts are found by name (every ``benchmarks/*.py`` not starting with ``_``): a
new script without ``--smoke`` fails here. They run as the programs they are, against
the test database and Redis, each with its own Celery queue and channel prefix, a few
at a time (most of their time is spent waiting for the processes they start).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.processes import ROOT, child_database_url

BENCHMARKS = ROOT / "benchmarks"
SCRIPTS = sorted(p.name for p in BENCHMARKS.glob("*.py") if not p.name.startswith("_"))
HELPERS = sorted(p.stem for p in BENCHMARKS.glob("_*.py"))
AT_ONCE = 4
TIMEOUT_S = 600  # each; a busy 2-core machine starts Django in tens of seconds


def run_smoke(script: str) -> tuple[str, int, str, str, float]:
    name = Path(script).stem.replace("_", "-")
    env = {
        **os.environ,
        "DATABASE_URL": child_database_url(f"smoke-{name}"),
        "SF_CELERY_QUEUE": f"{os.environ['SF_CELERY_QUEUE']}-smoke-{name}",
        "SF_CHANNELS_PREFIX": f"{os.environ['SF_CHANNELS_PREFIX']}-smoke-{name}",
        "PYTHONUNBUFFERED": "1",
    }
    started = time.monotonic()
    # Its own process group: whatever the script starts (Celery workers, daphne, uvicorn)
    # ends with it, even when it times out or forgets one.
    script_process = subprocess.Popen(
        [sys.executable, f"benchmarks/{script}", "--smoke"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        output, errors = script_process.communicate(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:  # reported with the others, not alone
        group_end(script_process.pid)
        output, errors = script_process.communicate()
        return script, -1, output, f"timed out after {TIMEOUT_S} s\n{errors}", TIMEOUT_S
    left = group_end(script_process.pid)
    if left:
        errors += f"\nleft running after it exited (ended here): {left}"
        return script, -2, output, errors, time.monotonic() - started
    return script, script_process.returncode, output, errors, time.monotonic() - started


def group_end(group: int) -> list[str]:
    """End every process still in ``group``; their command lines."""
    left = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == group:
            continue
        try:
            if os.getpgid(int(pid)) != group:
                continue
            left.append(Path(f"/proc/{pid}/cmdline").read_text().replace("\0", " ")[:120])
        except (OSError, ProcessLookupError):
            continue
    with contextlib.suppress(ProcessLookupError):
        os.killpg(group, signal.SIGKILL)
    return left


@pytest.mark.unsettled  # badge_latency.py hangs in its websocket; pageload.py leaks uvicorn
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_every_benchmark_runs_in_smoke_mode() -> None:
    assert len(SCRIPTS) >= 18, SCRIPTS
    with ThreadPoolExecutor(AT_ONCE) as pool:
        results = list(pool.map(run_smoke, SCRIPTS))
    failures = []
    for script, code, output, errors, seconds in results:
        last = output.strip().splitlines()[-1] if output.strip() else ""
        print(f"{script}: exit {code} in {seconds:.1f} s")
        try:
            figures = json.loads(last) if code == 0 else None
        except ValueError:
            figures = None
        if not isinstance(figures, dict):
            failures.append(f"--- {script} (exit {code}): {output[-1500:]}\n{errors[-3000:]}")
    assert not failures, "\n".join(failures)


def test_every_helper_of_the_benchmarks_runs_in_some_smoke_run() -> None:
    """The smoke runs cover a helper module (``benchmarks/_*.py``) only if a script
    imports it, directly or through another helper: one that none does would rot unseen."""
    imports = {
        path.stem: set(re.findall(r"^\s*(?:from|import) (_\w+)", path.read_text(), re.M))
        for path in BENCHMARKS.glob("*.py")
    }
    reached = {Path(script).stem for script in SCRIPTS}
    while True:
        more = set().union(*(imports[name] for name in reached)) & set(HELPERS)
        if more <= reached:
            break
        reached |= more
    assert sorted(set(HELPERS) - reached) == []
