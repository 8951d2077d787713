"""A small stdio MCP server for the MCP client's tests, written with the ``mcp`` package.

A pretend issue tracker kept as files in its working directory (a unit's worktree):
``lookup`` reads an item (read-only), ``create_item`` writes ``items/<name>.txt``,
``drop_all`` deletes every item (destructive), ``credentials`` answers with the value of
``TRACKER_TOKEN`` (a project secret it was given: the trace must show it redacted) and
``inspect`` says what the server can see (its PID, its working directory, whether it
reaches the network); ``wait`` and ``crash`` misbehave on purpose. Run:
``python mcp_test_server.py [--items DIR] [--only TOOL,…] [--marker WORD]``; the marker
only makes the process findable by ``pgrep -f``.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer

server = MCPServer("tracker")
# The items: ``--items DIR`` (a folder the agent cannot see), else ./items (the worktree).
ITEMS = Path(sys.argv[sys.argv.index("--items") + 1] if "--items" in sys.argv else "items")


@server.tool()
def lookup(key: str) -> str:
    """Look up one item of the tracker by its key."""
    path = ITEMS / f"{key}.txt"
    if not path.is_file():
        return f"no item {key}"
    return f"item {key}: {path.read_text()}"


@server.tool()
def create_item(name: str, body: str = "") -> str:
    """Create an item: writes items/<name>.txt in the working directory."""
    ITEMS.mkdir(exist_ok=True)
    (ITEMS / f"{name}.txt").write_text(body)
    return f"created item {name}"


@server.tool()
def drop_all() -> str:
    """Delete every item of the tracker, for good."""
    count = len(list(ITEMS.glob("*.txt"))) if ITEMS.is_dir() else 0
    shutil.rmtree(ITEMS, ignore_errors=True)
    return f"dropped {count} items"


@server.tool()
def credentials() -> str:
    """Show the tracker's API token."""
    return f"token: {os.environ.get('TRACKER_TOKEN', '(none)')}"


@server.tool()
def inspect() -> str:
    """What this server can see of its host."""
    try:
        with socket.create_connection(("127.0.0.1", 6379), timeout=2):
            network = True
    except OSError:
        network = False
    proxy = os.environ.get("HTTPS_PROXY", "")
    return json.dumps({"pid": os.getpid(), "cwd": os.getcwd(), "network": network, "proxy": proxy})


@server.tool()
def wait(seconds: float) -> str:
    """Wait before answering."""
    import time

    time.sleep(seconds)
    return "waited"


@server.tool()
def crash() -> str:
    """Exit at once, without answering."""
    os._exit(3)


if __name__ == "__main__":
    if "--only" in sys.argv:  # offer only these tools (a shorter prompt for a small model)
        kept = sys.argv[sys.argv.index("--only") + 1].split(",")
        for name in (
            "lookup",
            "create_item",
            "drop_all",
            "credentials",
            "inspect",
            "wait",
            "crash",
        ):
            if name not in kept:
                server.remove_tool(name)
    if "--slow" in sys.argv:
        import time

        time.sleep(float(sys.argv[sys.argv.index("--slow") + 1]))
    server.run("stdio")
