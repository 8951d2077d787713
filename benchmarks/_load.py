"""Load against SF's real web server (``scripts/web.sh``), and Debian's ``wrk`` as the client.

``wrk`` (C, event-driven) is the load generator: it costs the two cores far less than
a Python client would, and its Lua hooks give exact percentiles. Closed loop: each of
the connections sends its next request when the last answer arrived, so the figures
are the server at saturation. Paced: each connection waits a random 0.5 to 1.5 s between
requests (``wrk``'s ``delay()``), people reading pages rather than a flood.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import ROOT
from _processes import start, stop

WRK_SCRIPT = """
local paced = os.getenv("SF_WRK_PACED") == "1"
function delay()
  if paced then return math.random(500, 1500) end
  return 0
end
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '{"requests": %d, "duration_us": %d, "p50_us": %d, "p95_us": %d, "p99_us": %d, ' ..
    '"max_us": %d, "mean_us": %d, "errors": %d, "errors_status": %d, "errors_timeout": %d}\\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(95),
    latency:percentile(99), latency.max, latency.mean,
    e.connect + e.read + e.write + e.status + e.timeout, e.status, e.timeout))
end
"""


def wrk_path() -> str:
    """Debian's wrk, installed here if missing and we may (``apt-get install wrk``)."""
    found = shutil.which("wrk")
    if found:
        return found
    if os.geteuid() == 0 and shutil.which("apt-get"):
        subprocess.run(["apt-get", "install", "-y", "wrk"], check=True, capture_output=True)
        found = shutil.which("wrk")
    if not found:
        raise SystemExit("wrk is needed: apt-get install -y wrk")
    return found


class WebServer:
    """SF's web server as deployed (``scripts/web.sh``: uvicorn, ``processes`` processes
    on one listening socket; by default one per core, as scripts/run.sh and compose.yaml
    run it) on a free local port."""

    def __init__(self, *, processes: int | None = None, env: dict[str, str] | None = None) -> None:
        from tests.processes import free_port

        self.processes = processes or os.cpu_count() or 1
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        log_path = os.environ.get("SF_BENCH_SERVER_LOG", os.devnull)
        server_env = {
            **os.environ,
            "SF_HOST": "127.0.0.1",
            "SF_PORT": str(self.port),
            "SF_WEB_PROCESSES": str(self.processes),
            "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}",
            **(env or {}),
        }
        with open(log_path, "a") as log:  # the server keeps its own descriptor
            self.server = start(
                ["bash", str(ROOT / "scripts" / "web.sh")],
                cwd=ROOT,
                env=server_env,
                stdout=log,
                stderr=subprocess.STDOUT,
                own_group=True,  # its supervisor and processes stop together
            )

    def wait_ready(self, path: str, cookie: str = "", timeout: float = 180) -> None:
        """Until ``path`` answers 200 (every process loaded Django and warmed up)."""
        import urllib.request

        deadline = time.monotonic() + timeout
        ok, last = 0, "no answer yet"
        while time.monotonic() < deadline:
            if self.server.poll() is not None:
                raise SystemExit(f"the web server exited with {self.server.returncode}")
            request = urllib.request.Request(self.url + path, headers={"Cookie": cookie})
            try:
                with urllib.request.urlopen(request, timeout=10) as response:
                    # Not redirected to the login page: the cookie works.
                    answered = response.status == 200 and response.geturl() == self.url + path
                    ok = ok + 1 if answered else 0
                    last = f"{response.status} at {response.geturl()}"
            except OSError as error:
                ok, last = 0, repr(error)
                time.sleep(0.2)
            if ok >= 4 * self.processes:
                return
        raise SystemExit(
            f"the web server at {self.url} did not answer {path} with 200 (its own page, "
            f"{4 * self.processes} times in a row) within {timeout:g} s; last: {last}"
        )

    def stop(self) -> None:
        """uvicorn's supervisor stops its processes on SIGTERM; its group is killed
        after the grace, and after it exited, so that none is left."""
        stop(self.server)


def wrk(
    url: str,
    *,
    headers: dict[str, str],
    connections: int = 20,
    seconds: int = 10,
    paced: bool = False,
) -> dict[str, Any]:
    """One wrk run; its figures in milliseconds, with requests per second."""
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        script.write(WRK_SCRIPT)
    try:
        command = [wrk_path(), "-t2", f"-c{connections}", f"-d{seconds}s", "--timeout", "10s"]
        for name, value in headers.items():
            command += ["-H", f"{name}: {value}"]
        command += ["-s", script.name, url]
        env = {**os.environ, "SF_WRK_PACED": "1" if paced else "0"}
        result = subprocess.run(command, capture_output=True, text=True, check=True, env=env)
    finally:
        Path(script.name).unlink()
    raw = json.loads(result.stdout.strip().splitlines()[-1])
    return {
        "requests": raw["requests"],
        "per_s": round(raw["requests"] / (raw["duration_us"] / 1e6), 1),
        "p50_ms": round(raw["p50_us"] / 1000, 1),
        "p95_ms": round(raw["p95_us"] / 1000, 1),
        "p99_ms": round(raw["p99_us"] / 1000, 1),
        "max_ms": round(raw["max_us"] / 1000, 1),
        "errors": raw["errors"],
        "errors_status": raw["errors_status"],
        "errors_timeout": raw["errors_timeout"],
    }
