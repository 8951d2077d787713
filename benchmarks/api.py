"""The API's task list at 1,000 tasks under 20 concurrent clients.

``GET /api/sessions/{id}/tasks?limit=100`` with a bearer token, against SF's web
server (``scripts/web.sh``: a process per core) on real PostgreSQL (the busy project
of ``_world``: 1,000 tasks in every state), Debian's ``wrk`` as the load (``_load``),
``--seconds`` a run, ``--runs`` runs:

* ``api_tasks_p95_ms`` (the median of the runs' p95): closed loop, 20 connections each
  asking again at once — the server saturated, p95 ≈ 20 times one request's time;
* ``api_tasks_paced_p95_ms``: each connection waits 0.5 to 1.5 s between calls, as CI
  jobs and bots polling would;
* ``api_tasks_per_s``: requests per second at saturation.

Target: p95 under 100 ms. Needs team mode (.sf/env).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import uuid
from pathlib import Path

from _common import django_team_mode, parse_args, report

django_team_mode()

import _world  # noqa: E402
from _load import WebServer, wrk  # noqa: E402

from api_app.tokens import token_create  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--connections", type=int, default=20)
    parser.add_argument("--processes", type=int, default=0, help="0: one per core")
    args = parse_args(parser, smoke={"seconds": 1, "runs": 1, "connections": 2})
    closed: list[dict[str, float]] = []
    paced: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        world = _world.build(Path(tmp), tag=uuid.uuid4().hex[:8], trace_events=2)
        secret = token_create(user=world.user, name="bench").secret
        server = WebServer(processes=args.processes or None)
        try:
            server.wait_ready("/healthz")
            url = f"{server.url}/api/sessions/{world.session.pk}/tasks?limit=100&offset=500"
            headers = {"Authorization": f"Bearer {secret}"}
            for run in range(args.runs):
                for pace, found in ((False, closed), (True, paced)):
                    figures = wrk(
                        url,
                        headers=headers,
                        connections=args.connections,
                        seconds=args.seconds,
                        paced=pace,
                    )
                    print(f"run {run + 1}{' paced' if pace else ''}: {figures}")
                    assert figures["errors"] == 0, figures
                    found.append(figures)
        finally:
            server.stop()
            world.delete()

    def median(runs: list[dict[str, float]], key: str) -> float:
        return round(statistics.median(run[key] for run in runs), 1)

    report(
        {
            "api_tasks_p95_ms": median(closed, "p95_ms"),
            "api_tasks_p50_ms": median(closed, "p50_ms"),
            "api_tasks_per_s": median(closed, "per_s"),
            "api_tasks_paced_p95_ms": median(paced, "p95_ms"),
            "api_tasks_paced_p50_ms": median(paced, "p50_ms"),
            "connections": args.connections,
            "processes": args.processes or os.cpu_count(),
            "runs": args.runs,
        }
    )


if __name__ == "__main__":
    main()
