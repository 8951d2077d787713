"""A unit's MCP servers with the real bubblewrap, the real mcp package and real processes:
started in the sandbox, listed, called, and gone when the hub closes on every path."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest
from django.test import override_settings

from agents_app.runtime.mcp_hub import McpCallFailed, McpHub, McpStartFailed, ServerLaunch
from agents_app.runtime.mcp_tools import result_text
from agents_app.runtime.sandbox import SandboxPolicy, bwrap_problem
from agents_app.tests.mcp_helpers import alive, install_server, marker, tracker_launch

pytestmark = pytest.mark.skipif(
    bool(bwrap_problem("/usr/bin/bwrap")), reason="bubblewrap is required (scripts/setup.sh)"
)
NORMAL = SandboxPolicy(network=False, profile="normal")


@pytest.fixture
def worktree(tmp_path: Path) -> Path:
    path = tmp_path / "wt"
    path.mkdir()
    install_server(path)
    return path


def test_a_server_starts_in_the_sandbox_lists_its_tools_and_answers(worktree: Path) -> None:
    word = marker()
    with McpHub(worktree=worktree, sandbox=NORMAL) as hub:
        tools = hub.start(tracker_launch(word))
        assert hub.sandboxed
        assert {t.name for t in tools} >= {"lookup", "create_item", "drop_all", "inspect"}
        lookup = next(t for t in tools if t.name == "lookup")
        assert lookup.input_schema["required"] == ["key"]
        assert "Look up one item" in lookup.description
        created = hub.call("tracker", "create_item", {"name": "a1", "body": "open"})
        assert result_text(created) == "created item a1"
        assert (worktree / "items" / "a1.txt").read_text() == "open"  # its cwd: the worktree
        seen = json.loads(result_text(hub.call("tracker", "inspect", {})))
        assert seen["cwd"] == str(worktree.resolve())
        assert seen["network"] is False  # no network unless granted
        assert seen["pid"] < 10  # a PID namespace of its own
        assert alive(word)
    assert not alive(word)


def test_a_granted_network_is_the_egress_proxy_and_never_loopback(worktree: Path) -> None:
    with McpHub(worktree=worktree, sandbox=NORMAL) as hub:
        hub.start(tracker_launch(marker(), network=True))
        seen = json.loads(result_text(hub.call("tracker", "inspect", {})))
        assert seen["proxy"] == "http://127.0.0.1:3128"  # its only way out
        assert seen["network"] is False  # the host's Redis on loopback does not answer


def test_no_server_survives_a_unit_that_ends_with_an_exception(worktree: Path) -> None:
    word = marker()

    def unit() -> None:
        with McpHub(worktree=worktree, sandbox=NORMAL) as hub:
            hub.start(tracker_launch(word))
            hub.start(tracker_launch(word, name="second"))
            assert alive(word)
            raise RuntimeError("the loop broke")

    with pytest.raises(RuntimeError, match="the loop broke"):
        unit()
    assert not alive(word)


@pytest.mark.parametrize(
    ("launch", "expected"),
    [
        (
            # prlimit, which sets the sandbox's resource limits, is what execs it.
            ServerLaunch("gone", "/nonexistent/tracker-mcp"),
            "failed to execute /nonexistent/tracker-mcp: No such file",
        ),
        (ServerLaunch("dies", "bash", ("-c", "echo bad config >&2; exit 3")), "bad config"),
        (
            ServerLaunch("slow", "sleep", ("30",), startup_timeout=timedelta(seconds=2)),
            "did not start and list its tools within 2 s",
        ),
    ],
    ids=["missing", "exits", "silent"],
)
def test_a_server_that_cannot_start_is_a_clear_error(
    worktree: Path, launch: ServerLaunch, expected: str
) -> None:
    with McpHub(worktree=worktree, sandbox=NORMAL) as hub:
        with pytest.raises(McpStartFailed, match=expected) as failed:
            hub.start(launch)
        assert str(failed.value).startswith(f"{launch.name}: ")
        assert hub.start(tracker_launch(marker()))  # the others still start


def test_a_slow_or_dead_server_fails_the_call_not_the_unit(worktree: Path) -> None:
    word = marker()
    with McpHub(worktree=worktree, sandbox=NORMAL) as hub:
        hub.start(tracker_launch(word, call_timeout=timedelta(seconds=1)))
        with pytest.raises(McpCallFailed, match="did not answer wait within 1 s"):
            hub.call("tracker", "wait", {"seconds": 5})
        with pytest.raises(McpCallFailed, match="tracker failed on crash"):
            hub.call("tracker", "crash", {})
        with pytest.raises(McpCallFailed, match=r"has stopped|failed on lookup"):
            hub.call("tracker", "lookup", {"key": "a"})
    assert not alive(word)


def test_without_the_sandbox_a_server_still_stops_with_the_hub(worktree: Path) -> None:
    word = marker()
    with override_settings(SF_SANDBOX="off"), McpHub(worktree=worktree, sandbox=NORMAL) as hub:
        hub.start(tracker_launch(word))
        assert not hub.sandboxed
        assert json.loads(result_text(hub.call("tracker", "inspect", {})))["network"] is True
    assert not alive(word)


def test_a_profile_above_normal_needs_the_sandbox(worktree: Path) -> None:
    trusted = SandboxPolicy(network=False, profile="trusted")
    hub = McpHub(worktree=worktree, sandbox=trusted)
    with (
        override_settings(SF_SANDBOX_BWRAP="/nonexistent/bwrap"),
        hub,
        pytest.raises(McpStartFailed, match="the trusted profile needs the OS sandbox"),
    ):
        hub.start(tracker_launch(marker()))
