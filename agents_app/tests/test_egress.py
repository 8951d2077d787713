"""Egress of sandboxed commands through SF's filtering proxy, with the real bubblewrap:
a grant opens the listed domains and nothing of the host (finding 3 of issue 27: with
``egress: ["pypi.org"]`` a command read SF's own PostgreSQL on loopback).

Nothing here leaves the machine: ``SF_NET_TEST_HOSTS`` maps made-up ``*.sf.test``
names to a loopback listener the module starts, and ``SF_NET_ALLOW_HOSTS`` (the
server's setting, as an operator would list an internal host) lets the one allowed
name reach it."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from django.core.checks import Tags, run_checks

from agents_app.runtime.egress import host_listed
from agents_app.runtime.sandbox import (
    CommandRun,
    SandboxRefused,
    bwrap_problem,
    policy_for,
    sandboxed_run,
)

pytestmark = pytest.mark.skipif(
    bool(bwrap_problem("/usr/bin/bwrap")), reason="bubblewrap is required (scripts/setup.sh)"
)
GRANT = policy_for("normal", ["pypi.org", "allowed.sf.test", "rebound.sf.test"])
PROXY = "http://127.0.0.1:3128"


class _Hello(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"hello from the allowed host\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def http_port() -> Iterator[int]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Hello)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def tcp_port() -> Iterator[int]:
    """A bare TCP listener on the host's loopback (a database, say)."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        yield listener.getsockname()[1]


@pytest.fixture(autouse=True)
def _test_names(settings: Any) -> None:
    settings.SF_NET_TEST_HOSTS = {
        "allowed.sf.test": "127.0.0.1",
        "other.sf.test": "127.0.0.1",
        "rebound.sf.test": "127.0.0.1",  # listed by the project, not by the server
    }
    settings.SF_NET_ALLOW_HOSTS = ["allowed.sf.test"]


def run(tmp_path: Path, command: str, policy: Any = GRANT) -> CommandRun:
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}
    return sandboxed_run(command, worktree=tmp_path, policy=policy, env=env, timeout=30)


def _connect(host: str, port: int) -> str:
    return f"(exec 3<>/dev/tcp/{host}/{port}) 2>/dev/null && echo CONNECTED || echo REFUSED"


def _connect_via_proxy(target: str) -> str:
    """A raw CONNECT to the proxy; prints its status line."""
    return (
        "exec 3<>/dev/tcp/127.0.0.1/3128 || exit 9; "
        f"printf 'CONNECT {target} HTTP/1.1\\r\\nHost: {target}\\r\\n\\r\\n' >&3; "
        "head -n 1 <&3"
    )


def test_with_egress_granted_no_loopback_listener_answers(tmp_path: Path, tcp_port: int) -> None:
    for port in (tcp_port, 5432, 6379):  # the test's listener, PostgreSQL, Redis
        assert run(tmp_path, _connect("127.0.0.1", port)).output.strip() == "REFUSED"


@pytest.mark.parametrize(
    "target",
    ["127.0.0.1:5432", "localhost:6379", "[::1]:5432", "rebound.sf.test:5432", "2130706433:5432"],
)
def test_the_proxy_refuses_loopback_after_resolving_even_for_every_host(
    tmp_path: Path, target: str
) -> None:
    done = run(tmp_path, _connect_via_proxy(target), policy_for("unrestricted", []))
    status, *trace = done.output.strip().split("\n")
    assert status.startswith("HTTP/1.1 403")
    assert trace[-1].startswith(f"egress CONNECT {target.rsplit(':', 1)[0].strip('[]')}:")
    assert "refused:" in trace[-1]
    assert "SF does not connect there" in trace[-1]


def test_an_allowed_domain_is_reached_over_connect_and_plain_http(
    tmp_path: Path, http_port: int
) -> None:
    url = f"http://allowed.sf.test:{http_port}/"
    done = run(tmp_path, f"curl -sS {url} && curl -sS --proxytunnel {url}")
    lines = done.output.strip().split("\n")
    assert lines[:2] == ["hello from the allowed host"] * 2
    assert lines[2:] == [
        f"egress GET allowed.sf.test:{http_port} allowed",
        f"egress CONNECT allowed.sf.test:{http_port} allowed",
    ]


def test_a_domain_not_in_the_list_is_refused_and_traced(tmp_path: Path, http_port: int) -> None:
    done = run(
        tmp_path, f"curl -sS -o /dev/null -w '%{{http_code}}\\n' http://other.sf.test:{http_port}/"
    )
    status, line = done.output.strip().split("\n")
    assert status == "403"
    assert line == f"egress GET other.sf.test:{http_port} refused: not in the project's egress list"


def test_a_listed_domain_that_resolves_to_loopback_is_refused(
    tmp_path: Path, http_port: int
) -> None:
    done = run(tmp_path, f"curl -sS http://rebound.sf.test:{http_port}/")
    assert "hello" not in done.output
    assert "rebound.sf.test is a loopback address (127.0.0.1)" in done.output


def test_host_lists_match_exact_names_subdomains_and_everything() -> None:
    assert host_listed("pypi.org", ["pypi.org"])
    assert host_listed("files.pythonhosted.org", ["*.pythonhosted.org"])
    assert not host_listed("pythonhosted.org", ["*.pythonhosted.org"])
    assert not host_listed("evilpypi.org", ["pypi.org", "*.pypi.org"])
    assert host_listed("PyPI.org.", ["pypi.org"])
    assert host_listed("example.com", ["*"])
    assert not host_listed("example.com", [])


def test_without_socat_a_granted_command_is_refused_with_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("agents_app.runtime.egress.SOCAT", str(tmp_path / "no-socat"))
    with pytest.raises(SandboxRefused, match=r"needs socat at .*no-socat"):
        run(tmp_path, "true")
    assert run(tmp_path, "true", policy_for("normal", [])).exit_code == 0  # no grant: runs
    [warning] = [m for m in run_checks(tags=[Tags.security]) if m.id == "sf.W012"]
    assert "socat" in warning.hint
