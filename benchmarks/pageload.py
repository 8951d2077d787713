"""Page load under 20 concurrent clients: dashboard, task board (1,000 tasks) and a unit
page (a 300-event trace), each served by a real daphne process on real PostgreSQL and
Redis, with a logged-in session cookie; Debian's ``wrk`` as the load (``_load``).

For each page, two loads of ``--seconds`` each, ``--runs`` times (medians reported):

* closed loop (``*_p95_ms``): 20 connections, each asking again as soon as it has its
  answer — the server saturated, so p95 ≈ 20 times the time one request takes;
* paced (``*_paced_p95_ms``): the same 20 connections, each waiting 0.5 to 1.5 s between
  pages, as people reading them would.

The target is p95 ≤ 100 ms. ``--processes N`` sets the number of server processes
(0, the default: one per core, as scripts/web.sh). Needs team mode (.sf/env).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import uuid
from collections import defaultdict
from pathlib import Path

from _common import django_team_mode, parse_args, report

django_team_mode()

import _world  # noqa: E402
from _load import WebServer, wrk  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--connections", type=int, default=20)
    parser.add_argument("--processes", type=int, default=0, help="0: one per core")
    parser.add_argument("--tasks", type=int, default=1000)
    args = parse_args(parser, smoke={"seconds": 1, "runs": 1, "connections": 2, "tasks": 20})
    found: dict[str, list[dict[str, float]]] = defaultdict(list)
    with tempfile.TemporaryDirectory() as tmp:
        world = _world.build(Path(tmp), tag=uuid.uuid4().hex[:8], tasks=args.tasks)
        pages = {
            "dashboard": "/",
            "board": f"/tasks/?session={world.session.pk}",
            "unit": f"/units/{world.unit.pk}/",
        }
        server = WebServer(processes=args.processes or None)
        try:
            for path in pages.values():
                server.wait_ready(path, world.cookie)
            for run in range(args.runs):
                for name, path in pages.items():
                    for paced in (False, True):
                        label = f"{name}_paced" if paced else name
                        figures = wrk(
                            server.url + path,
                            headers={"Cookie": world.cookie},
                            connections=args.connections,
                            seconds=args.seconds,
                            paced=paced,
                        )
                        print(f"run {run + 1} {label:>16}: {figures}")
                        assert figures["errors"] == 0, f"{label}: {figures['errors']} errors"
                        found[label].append(figures)
        finally:
            server.stop()
            world.delete()
    result: dict[str, object] = {
        "connections": args.connections,
        "processes": args.processes or os.cpu_count(),
        "runs": args.runs,
    }
    for label, runs in found.items():
        for key in ("p95_ms", "p50_ms", "per_s"):
            result[f"{label}_{key}"] = round(statistics.median(run[key] for run in runs), 1)
    report(result)


if __name__ == "__main__":
    main()
