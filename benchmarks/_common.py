"""Helpers shared by the benchmark scripts: timing, medians and the machine they ran on."""

from __future__ import annotations

import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


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


def report(figures: dict[str, Any]) -> None:
    """Print the figures; the last line is always the JSON object."""
    print(f"machine: {machine()}")
    print(json.dumps(figures, sort_keys=True))
