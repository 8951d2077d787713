"""Helpers shared by the benchmark scripts: timing, medians and the machine they ran on."""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _processes import install as install_process_cleanup

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# Every script imports this module first: from here on, SIGTERM unwinds it and what it
# started (through ``start``) stops with it.
install_process_cleanup()


def machine() -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    python = platform.python_version()
    return f"{platform.node()} · {cpu} · {os.cpu_count()} cores · Python {python}"


def median_seconds(function: Callable[[], Any], *, runs: int, warmup: int = 1) -> float:
    """Median wall time of ``function`` over ``runs`` runs, after ``warmup`` unmeasured ones."""
    for _ in range(warmup):
        function()
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        function()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
    return ordered[index]


SMOKE_HELP = (
    "a tiny run that shows the script still works end to end (CI runs every script so: "
    "tests/test_benchmarks_smoke.py); its figures mean nothing"
)


def parse_args(parser: argparse.ArgumentParser, *, smoke: dict[str, Any]) -> argparse.Namespace:
    """The script's arguments, with ``--smoke``: ``smoke`` holds the values that make a
    run of the script take seconds (they replace what was given)."""
    parser.add_argument("--smoke", action="store_true", help=SMOKE_HELP)
    args = parser.parse_args()
    if args.smoke:
        for name, value in smoke.items():
            setattr(args, name, value)
    return args


def report(figures: dict[str, Any]) -> None:
    """Print the figures; the last line is always the JSON object."""
    print(f"machine: {machine()}")
    print(json.dumps(figures, sort_keys=True))


def django_team_mode() -> None:
    """Set up Django against the team-mode services scripts/setup.sh settled on."""
    env_file = ROOT / ".sf" / "env"
    if env_file.exists():
        for line in env_file.read_text().splitlines():
            name, _, value = line.partition("=")
            os.environ.setdefault(name, value)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "sf_web.settings")
    import django

    django.setup()


def throwaway_repo(path: Path) -> Path:
    """An empty git repository on main, for a throw-away benchmark project."""
    import subprocess

    for args in (["init", "-q", "-b", "main"], ["commit", "-q", "--allow-empty", "-m", "init"]):
        subprocess.run(
            ["git", "-c", "user.name=bench", "-c", "user.email=b@example.com", *args],
            cwd=path,
            check=True,
        )
    return path
