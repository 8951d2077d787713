"""The MCP test server (tests/mcp_test_server.py) as a unit would start it."""

from __future__ import annotations

import shutil
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

from agents_app.runtime.mcp_hub import ServerLaunch

SERVER_SOURCE = Path(__file__).resolve().parents[2] / "tests" / "mcp_test_server.py"
SERVER_FILE = "tools/tracker_mcp.py"  # where a project keeps it, in its repository
# The interpreter that has the mcp package, hidden under $HOME or SF's checkout by the
# sandbox unless exposed (what a project's policy does for a server installed there).
# Named by its real path: a .venv that is a symlink (scripts/setup.sh keeps the venv in
# ~/.cache/sf) is exposed where it really is, and the program must be named there too.
VENV = Path(sys.prefix).resolve()
PYTHON = str(VENV / "bin" / "python")
PYTHON_PATHS = [str(VENV), sys.base_prefix]


def install_server(root: Path) -> Path:
    """Copy the test server into ``root`` (a repository or a worktree)."""
    target = root / SERVER_FILE
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(SERVER_SOURCE, target)
    return target


def marker() -> str:
    """A word that makes one test's server processes findable with ``pgrep -f``."""
    return f"sf-mcp-test-{uuid.uuid4().hex[:10]}"


def alive(word: str) -> bool:
    return subprocess.run(["pgrep", "-f", word], capture_output=True).returncode == 0


def server_policy(word: str, **extra: Any) -> dict[str, Any]:
    """The project policy's entry for the tracker server, with ``word`` as its marker."""
    return {
        "command": PYTHON,
        "args": [SERVER_FILE, "--marker", word],
        "expose": PYTHON_PATHS,
        **extra,
    }


def tracker_launch(word: str, *extra_args: str, **fields: Any) -> ServerLaunch:
    return ServerLaunch(
        name=fields.pop("name", "tracker"),
        command=PYTHON,
        args=(SERVER_FILE, "--marker", word, *extra_args),
        expose=tuple(Path(p) for p in PYTHON_PATHS),
        **fields,
    )
