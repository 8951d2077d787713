"""What egress through SF's proxy adds to a sandboxed command (docs/security.md).

Interleaved in one run, ``--runs`` times each (real bubblewrap, ``true`` as the
command): the sandbox without a grant (its own network namespace, nothing else), and
with ``egress: ["pypi.org"]`` (the proxy started on its Unix socket in a thread, socat
started in the sandbox and waited for, the proxy stopped). Also the proxy's own start
and stop, and one plain-HTTP request through it to a loopback listener under a test
name (nothing leaves the machine).

    .venv/bin/python benchmarks/egress.py [--runs 100]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from _common import django_team_mode, parse_args, report

ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}


def percentiles(seconds: list[float]) -> dict[str, float]:
    ordered = sorted(seconds)
    p95 = ordered[max(0, round(0.95 * len(ordered)) - 1)]
    return {"p50_ms": round(statistics.median(ordered) * 1000, 1), "p95_ms": round(p95 * 1000, 1)}


def timed(function: Any) -> float:
    started = time.perf_counter()
    function()
    return time.perf_counter() - started


class _Ok(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=100)
    runs = parse_args(parser, smoke={"runs": 3}).runs
    django_team_mode()
    from django.conf import settings

    from agents_app.runtime.egress import EgressProxy
    from agents_app.runtime.sandbox import policy_for, sandboxed_run

    server = ThreadingHTTPServer(("127.0.0.1", 0), _Ok)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    settings.SF_NET_TEST_HOSTS = {"bench.sf.test": "127.0.0.1"}
    settings.SF_NET_ALLOW_HOSTS = ["bench.sf.test"]
    url = f"http://bench.sf.test:{server.server_address[1]}/"
    closed, granted = policy_for("normal", []), policy_for("normal", ["bench.sf.test"])
    times: dict[str, list[float]] = {"no_grant": [], "grant": [], "grant_curl": []}
    with tempfile.TemporaryDirectory() as folder:
        worktree = Path(folder)

        def run(command: str, policy: Any) -> None:
            sandboxed_run(command, worktree=worktree, policy=policy, env=ENV, timeout=30)

        for _ in range(runs):
            times["no_grant"].append(timed(lambda: run("true", closed)))
            times["grant"].append(timed(lambda: run("true", granted)))
            times["grant_curl"].append(timed(lambda: run(f"curl -s {url}", granted)))
    proxy = [timed(lambda: EgressProxy(("x",)).__enter__().__exit__()) for _ in range(runs)]
    server.shutdown()
    figures: dict[str, Any] = {k: percentiles(v) for k, v in times.items()}
    figures["proxy_start_stop"] = percentiles(proxy)
    added = [g - n for g, n in zip(times["grant"], times["no_grant"], strict=True)]
    figures["added_by_egress"] = percentiles(added)
    figures["runs"] = runs
    for name, values in figures.items():
        print(f"{name:18} {values}")
    report(figures)


if __name__ == "__main__":
    main()
