"""Every script in benchmarks/ still runs: each once with ``--smoke`` (a tiny run of the
whole script, its figures meaningless), so that none rots unseen between the times
someone measures with it.

The scripts are found by name (every ``benchmarks/*.py`` not starting with ``_``): a
new script without ``--smoke`` fails here. They run as the programs they are, against
the test database and Redis, each with its own Celery queue and channel prefix, a few
at a time (most of their time is spent waiting for the processes they start).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.processes import ROOT, child_database_url

SCRIPTS = sorted(p.name for p in (ROOT / "benchmarks").glob("*.py") if not p.name.startswith("_"))
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
    try:
        done = subprocess.run(
            [sys.executable, f"benchmarks/{script}", "--smoke"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:  # reported with the others, not alone
        said = [str(text or "") for text in (exc.stdout, exc.stderr)]
        return script, -1, said[0], f"timed out after {TIMEOUT_S} s\n{said[1]}", TIMEOUT_S
    return script, done.returncode, done.stdout, done.stderr, time.monotonic() - started


@pytest.mark.unsettled  # chaos.py's smoke run alone takes minutes; tool_overhead.py exits 1
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
