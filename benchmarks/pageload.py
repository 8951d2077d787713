"""Page load under 20 concurrent clients: dashboard, task board (1,000 tasks) and a unit
page (a 300-event trace), each served by a real daphne process on real PostgreSQL and
Redis, with a logged-in session cookie; Debian's ``wrk`` as the load (``_load``).

For each page, two loads of ``--seconds`` each:

* closed loop (``*_p95_ms``): 20 connections, each asking again as soon as it has its
  answer — the server saturated, so p95 ≈ 20 × the time one request takes;
* paced (``*_paced_p95_ms``): the same 20 connections, each waiting 0.5–1.5 s between
  pages, as people reading them would.

The target is p95 ≤ 100 ms. ``--processes 2`` runs two daphne processes on one socket
(what a second core buys; compose.yaml runs one). Needs team mode (.sf/env).
"""

from __future__ import annotations

import argparse
import tempfile
import uuid
from pathlib import Path

from _common import django_team_mode, report

django_team_mode()

import _world  # noqa: E402
from _load import Daphne, wrk  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--connections", type=int, default=20)
    parser.add_argument("--processes", type=int, default=1)
    parser.add_argument("--tasks", type=int, default=1000)
    args = parser.parse_args()
    figures: dict[str, object] = {"connections": args.connections, "processes": args.processes}
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
            headers = {"Cookie": world.cookie}
            for name, path in pages.items():
                for paced in (False, True):
                    found = wrk(
                        server.url + path,
                        headers=headers,
                        connections=args.connections,
                        seconds=args.seconds,
                        paced=paced,
                    )
                    label = f"{name}_paced" if paced else name
                    print(f"{label:>16}: {found}")
                    assert found["errors"] == 0, f"{label}: {found['errors']} errors"
                    figures[f"{label}_p95_ms"] = found["p95_ms"]
                    figures[f"{label}_p50_ms"] = found["p50_ms"]
                    figures[f"{label}_per_s"] = found["per_s"]
        finally:
            server.stop()
            world.delete()
    report(figures)


if __name__ == "__main__":
    main()
