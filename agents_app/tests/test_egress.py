"""Egress of sandboxed commands through SF's filtering proxy, with the real bubblewrap:
a grant opens the listed domains and nothing of the host (finding 3 of issue 27: with
``egress: ["pypi.org"]`` a command read SF's own PostgreSQL on loopback).

Nothing here leaves the machine: ``SF_NET_TEST_HOSTS`` maps made-up ``*.sf.test``
names to a loopback listener the module starts, and ``SF_NET_ALLOW_HOSTS`` (the
server's setting, as an operator would list an internal host) lets the one allowed
name reach it. Each test that runs a command runs it twice, with bwrap started by root
and by an ordinary user (``agents_app.tests.sandbox_users``)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from django.core.checks import Tags, run_checks
from pydantic import ValidationError

from agents_app.runtime.egress import host_listed, request_problem
from agents_app.runtime.sandbox import (
    CommandRun,
    SandboxPolicy,
    SandboxRefused,
    bwrap_problem,
    policy_for,
    sandboxed_run,
)
from agents_app.schemas import ProjectPolicy
from agents_app.tests import sandbox_users
from agents_app.tests.sandbox_users import USERS

pytestmark = pytest.mark.skipif(
    bool(bwrap_problem("/usr/bin/bwrap")), reason="bubblewrap is required (scripts/setup.sh)"
)
GRANT = policy_for("normal", ["pypi.org", "allowed.sf.test", "rebound.sf.test"])


def grant_with_port(port: int) -> SandboxPolicy:
    """The grant with the test listener's port opened (beyond 443 and 80) by name."""
    return policy_for("normal", ["pypi.org", f"allowed.sf.test:{port}", f"rebound.sf.test:{port}"])


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


@pytest.fixture(scope="module", params=USERS)
def user(request: pytest.FixtureRequest) -> str:
    """Who runs bwrap: ``root`` (as scripts/run.sh does here) or an ordinary user."""
    return sandbox_users.chosen_user(request)


@pytest.fixture
def worktree(user: str) -> Iterator[Path]:
    for place in sandbox_users.shared_place():
        sandbox_users.own(user, place)
        yield place


def _run_here(worktree: Path, command: str, policy: SandboxPolicy) -> CommandRun:
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}
    return sandboxed_run(command, worktree=worktree, policy=policy, env=env, timeout=30)


def run(user: str, worktree: Path, command: str, policy: SandboxPolicy = GRANT) -> CommandRun:
    return sandbox_users.contained(user, worktree, command, policy)


def _connect(host: str, port: int) -> str:
    return f"(exec 3<>/dev/tcp/{host}/{port}) 2>/dev/null && echo CONNECTED || echo REFUSED"


def _connect_via_proxy(target: str) -> str:
    """A raw CONNECT to the proxy; prints its status line."""
    return (
        "exec 3<>/dev/tcp/127.0.0.1/3128 || exit 9; "
        f"printf 'CONNECT {target} HTTP/1.1\\r\\nHost: {target}\\r\\n\\r\\n' >&3; "
        "head -n 1 <&3"
    )


def test_with_egress_granted_no_loopback_listener_answers(
    user: str, worktree: Path, tcp_port: int
) -> None:
    for port in (tcp_port, 5432, 6379):  # the test's listener, PostgreSQL, Redis
        assert run(user, worktree, _connect("127.0.0.1", port)).output.strip() == "REFUSED"


@pytest.mark.parametrize(
    "target",
    ["127.0.0.1:443", "localhost:443", "[::1]:443", "rebound.sf.test:443", "2130706433:443"],
)
def test_the_proxy_refuses_loopback_after_resolving_even_for_every_host(
    user: str, worktree: Path, target: str
) -> None:
    done = run(user, worktree, _connect_via_proxy(target), policy_for("unrestricted", []))
    status, *trace = done.output.strip().split("\n")
    assert status.startswith("HTTP/1.1 403")
    assert trace[-1].startswith(f"egress CONNECT {target.rsplit(':', 1)[0].strip('[]')}:")
    assert "refused:" in trace[-1]
    assert "SF does not connect there" in trace[-1]


def test_an_allowed_domain_is_reached_over_connect_and_plain_http(
    user: str, worktree: Path, http_port: int
) -> None:
    url = f"http://allowed.sf.test:{http_port}/"
    command = f"curl -sS {url} && curl -sS --proxytunnel {url}"
    done = run(user, worktree, command, grant_with_port(http_port))
    lines = done.output.strip().split("\n")
    assert lines[:2] == ["hello from the allowed host"] * 2
    assert lines[2:] == [
        f"egress GET allowed.sf.test:{http_port} allowed",
        f"egress CONNECT allowed.sf.test:{http_port} allowed",
    ]


def test_a_domain_not_in_the_list_is_refused_and_traced(
    user: str, worktree: Path, http_port: int
) -> None:
    done = run(
        user,
        worktree,
        f"curl -sS -o /dev/null -w '%{{http_code}}\\n' http://other.sf.test:{http_port}/",
    )
    status, line = done.output.strip().split("\n")
    assert status == "403"
    assert line == f"egress GET other.sf.test:{http_port} refused: not in the project's egress list"


def test_a_listed_domain_that_resolves_to_loopback_is_refused(
    user: str, worktree: Path, http_port: int
) -> None:
    url = f"http://rebound.sf.test:{http_port}/"
    done = run(user, worktree, f"curl -sS {url}", grant_with_port(http_port))
    assert "hello" not in done.output
    assert "rebound.sf.test is a loopback address (127.0.0.1)" in done.output


def test_only_443_over_connect_and_80_over_http_unless_the_policy_names_a_port(
    user: str, worktree: Path, http_port: int
) -> None:
    # allowed.sf.test is listed without a port: the listener's port stays closed.
    url = f"http://allowed.sf.test:{http_port}/"
    tunnel = _connect_via_proxy(f"allowed.sf.test:{http_port}")
    done = run(
        user, worktree, f"{tunnel}; curl -sS {url}; {_connect_via_proxy('allowed.sf.test:443')}"
    )
    assert "hello" not in done.output
    refusal = (
        f"port {http_port} is not open: the proxy allows CONNECT to 443 and plain HTTP to 80; "
        f"the project's egress policy opens another port by naming it (allowed.sf.test:{http_port})"
    )
    events = [line for line in done.output.splitlines() if line.startswith("egress ")]
    assert events[:2] == [
        f"egress CONNECT allowed.sf.test:{http_port} refused: {refusal}",
        f"egress GET allowed.sf.test:{http_port} refused: {refusal}",
    ]
    assert "HTTP/1.1 403 Forbidden" in done.output.splitlines()[0]
    # 443 passes the port check (and then finds no listener on loopback's 443, or one).
    assert events[2].startswith("egress CONNECT allowed.sf.test:443 ")
    assert "not open" not in events[2]


def test_methods_and_ports_the_proxy_lets_through() -> None:
    allow = ["pypi.org", "*.example.com:8443", "*:2222"]
    assert request_problem("CONNECT", "pypi.org", 443, allow) == ""
    assert request_problem("GET", "pypi.org", 80, allow) == ""
    assert "port 80 is not open" in request_problem("CONNECT", "pypi.org", 80, allow)
    assert "port 443 is not open" in request_problem("GET", "pypi.org", 443, allow)
    assert request_problem("CONNECT", "a.example.com", 8443, allow) == ""
    assert "port 8443" in request_problem("CONNECT", "pypi.org", 8443, allow)
    assert request_problem("CONNECT", "anything.org", 2222, allow) == ""  # "*:2222"
    assert request_problem("TRACE", "pypi.org", 80, allow).startswith("method TRACE is not")
    assert request_problem("GET", "other.org", 80, ["pypi.org"]) == (
        "not in the project's egress list"
    )


def test_an_egress_entry_names_a_port_or_is_refused_with_the_reason() -> None:
    parsed = ProjectPolicy.model_validate({"egress": ["Example.com:8443", "[2606:4700::1]:22"]})
    assert parsed.egress == ["example.com:8443", "[2606:4700::1]:22"]
    for entry, reason in [
        ("example.com:0", "port that is not a number from 1 to 65535"),
        ("example.com:70000", "port that is not a number from 1 to 65535"),
        ("https://example.com", "is not a host name"),
        ("127.0.0.1:8080", "is a loopback address"),
    ]:
        with pytest.raises(ValidationError, match=reason):
            ProjectPolicy.model_validate({"egress": [entry]})


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
        _run_here(tmp_path, "true", GRANT)
    assert _run_here(tmp_path, "true", policy_for("normal", [])).exit_code == 0  # no grant
    [warning] = [m for m in run_checks(tags=[Tags.security]) if m.id == "sf.W012"]
    assert "socat" in (warning.hint or "")
