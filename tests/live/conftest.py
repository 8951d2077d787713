"""A real model for the live tests: llama.cpp's server on this machine (``scripts/local_model.py``).

The tests run only when the model is installed (``scripts/setup.sh --with-local-model``,
which ``scripts/test.sh`` does); ``pytest -m live_model`` selects them. One server
for the whole run, one request at a time, bound to 127.0.0.1, started as soon as the
run's tests are collected (the model loads while the test database is made).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.processes import ROOT, free_port

MODEL = os.environ.get("SF_LOCAL_MODEL", "qwen2.5-coder-1.5b")


SCRIPT = ROOT / "scripts" / "local_model.py"


def installed() -> bool:
    path = subprocess.run(
        [sys.executable, str(SCRIPT), "path", "--model", MODEL],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    try:
        import xllamacpp  # noqa: F401
    except ImportError:
        return False
    return Path(path).is_file()


@dataclass(frozen=True)
class LocalModel:
    name: str  # the litellm model name
    api_base: str

    def environment(self, temperature: float = 0.0) -> dict[str, str]:
        """Every model mode on the local model (planning asks deep, units smart), at
        ``temperature`` (0, SF's default: the likeliest answer)."""
        env = {"LITELLM_LOCAL_MODEL_COST_MAP": "True"}
        for mode in ("FAST", "SMART", "DEEP"):
            env[f"SF_MODEL_{mode}"] = self.name
            env[f"SF_MODEL_{mode}_API_BASE"] = self.api_base
            env[f"SF_MODEL_{mode}_API_KEY"] = "local"
            env[f"SF_MODEL_{mode}_TEMPERATURE"] = f"{temperature:g}"
        return env


_server: subprocess.Popen[str] | None = None


def _start() -> subprocess.Popen[str]:
    global _server
    if _server is None:
        threads = os.environ.get("SF_LOCAL_MODEL_THREADS", "2")
        command = [sys.executable, str(SCRIPT), "serve", "--model", MODEL]
        _server = subprocess.Popen(
            [*command, "--port", str(free_port()), "--threads", threads, "--temp", "0"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
    return _server


def pytest_collection_finish(session: pytest.Session) -> None:
    """Start loading the model as soon as the run is known to need it: it loads while
    the test database is made, not after."""
    if any(item.get_closest_marker("live_model") for item in session.items) and installed():
        _start()


def _stop(server: subprocess.Popen[str]) -> None:
    """SIGTERM; a server still loading the model answers it only once loaded: then KILL."""
    server.terminate()
    try:
        server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait(timeout=30)
    if server.stdout is not None:
        server.stdout.close()


def pytest_sessionfinish(session: pytest.Session) -> None:
    """A server started for a run that never used it (interrupted, all skipped) ends too."""
    if _server is not None and _server.poll() is None:
        _stop(_server)


@pytest.fixture(scope="session")
def local_model() -> Iterator[LocalModel]:
    if not installed():
        pytest.skip(f"{MODEL} is not installed: scripts/setup.sh --with-local-model")
    server = _start()
    try:
        assert server.stdout is not None
        line = server.stdout.readline()  # "ready URL" once /health answers
        assert line.startswith("ready "), f"the model server did not start: {line!r}"
        yield LocalModel(name=f"openai/{MODEL}", api_base=line.split()[1])
    finally:
        _stop(server)
