"""Page load under 20 concurrent clients: dashboard, task board (1,000 tasks) and a unit
page (a 300-event trace), each served by a real daphne process on real PostgreSQL and
Redis, with a logged-in session cookie; Debian's ``wrk`` as the load (``_load``).

For each page, two loads of ``--seconds`` each, ``--runs`` times (medians reported):

* closed loop (``*_p95_ms``): 20 connections, each asking again as soon as it has its
  answer — the server saturated, so p95 ≈ 20 times the time one request takes;
* paced (``*_paced_p95_ms``): the same 20 connections, each waiting 0.5 to 1.5 s between
  pages, as people reading them would.

The target is p95 ≤ 100 ms. ``--processes 2`` runs two daphne processes on one socket
(what a second core buys; compose.yaml runs one). Needs team mode (.sf/env).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import uuid
from collections import defaultdict
from pathlib import Path

from _common import django_team_mode, report

django_team_mode()

import _world  # noqa: E402
from _load import Daphne, wrk  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--connections", type=int, default=20)
    parser.add_argument("--processes", type=int, default=1)
    parser.add_argument("--tasks", type=int, default=1000)
    args = parser.parse_args()
    found: dict[str, list[dict[str, float]]] = defaultdict(list)
    with tempfile.TemporaryDirectory() as tmp:
        world = _world.build(Path(tmp), tag=uuid.uuid4().hex[:8], tasks=args.tasks)
        pages = {
            "dashboard": "/",
            "board": f"/tasks/?session={world.session.pk}",
            "unit": f"/units/{world.unit.pk}/",
        }
        server = Daphne(processes=args.processes)
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
        "processes": args.processes,
        "runs": args.runs,
    }
    for label, runs in found.items():
        for key in ("p95_ms", "p50_ms", "per_s"):
            result[f"{label}_{key}"] = round(statistics.median(run[key] for run in runs), 1)
    report(result)


if __name__ == "__main__":
    main()
