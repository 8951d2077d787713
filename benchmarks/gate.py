"""Permission gate throughput and latency: decisions per second and p99 per decision.

Each decision is timed on its own, parse included (nothing is cached between calls),
over a mixed corpus: the bypass corpus, ordinary agent commands and file tool calls,
under each profile, in a scratch worktree with a symlink that points out of it.
The last line is JSON: ``{"gate_decisions_per_s": …, "gate_p99_ms": …}``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from _common import percentile, report

from agents_app.policies import GateContext, ToolCall, decide
from agents_app.tests.bypass_corpus import CORPUS

ORDINARY = (
    "ls -la",
    "git status --short",
    "git diff HEAD~1 -- src/app.py",
    "git log --oneline -20",
    "grep -rn 'def main' src | head -20",
    "rg -n TODO src",
    "cat src/app.py",
    "find . -name '*.py' -not -path './.venv/*' | xargs wc -l",
    "pytest -q tests/test_app.py",
    "python -m pytest -x -k parser",
    "ruff check . && ruff format --check . && mypy",
    "mkdir -p src/pkg && touch src/pkg/__init__.py",
    "sed -i 's/old_name/new_name/g' src/app.py",
    "git add -A && git commit -m 'refactor: rename parser entry point'",
    "git checkout -b feature/gate",
    "npm ci && npm test",
    "cargo build --release 2>&1 | tail -5",
    "pip install -r requirements.txt",
    "curl -s https://example.org/api/v1/items | jq '.items[] | .name'",
    "for f in src/*.py; do echo $f; done",
    "echo done > .sf/plans/notes.md",
    "cd src && ls && cd ..",
)
FILES = (
    ("read_file", "src/app.py"),
    ("read_file", "../outside.txt"),
    ("write_file", "src/app.py"),
    ("write_file", ".sf/plan.md"),
    ("write_file", "etc-link/hosts"),
    ("edit_file", "src/pkg/module.py"),
    ("list_dir", "src"),
    ("grep", "src"),
    ("glob", "."),
)
PROFILES = ("restricted", "normal", "trusted", "unrestricted")


def scratch_worktree() -> Path:
    root = Path(tempfile.mkdtemp(prefix="sf-gate-bench-")) / "wt"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / ".sf").mkdir()
    for name in ("app.py", "parser.py", "cli.py"):
        (root / "src" / name).write_text("print(1)\n")
    os.symlink("/etc", root / "etc-link")
    return root


def corpus() -> list[ToolCall]:
    calls = [ToolCall(tool="run_command", input={"command": c}) for c in ORDINARY]
    for entry in CORPUS:
        if entry.tool == "run_command":
            calls.append(ToolCall(tool="run_command", input={"command": entry.command}))
        else:
            data = {"path": entry.path, "pattern": entry.pattern or "*", "content": "x"}
            calls.append(ToolCall(tool=entry.tool, input=data))
    calls += [
        ToolCall(tool=t, input={"path": p, "pattern": "**/*.py", "content": "x"}) for t, p in FILES
    ]
    return calls


def measure(calls: list[ToolCall], worktree: Path, rounds: int) -> list[float]:
    contexts = [
        GateContext(
            permission_profile=p, run_control="autonomous", work_mode="build", worktree=worktree
        )
        for p in PROFILES
    ]
    timings: list[float] = []
    clock = time.perf_counter_ns
    for _ in range(rounds):
        for ctx in contexts:
            for call in calls:
                started = clock()
                decide(call, ctx)
                timings.append((clock() - started) / 1e6)
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    worktree = scratch_worktree()
    calls = corpus()
    measure(calls, worktree, 1)  # warm-up: imports, regex and lru caches
    started = time.perf_counter()
    timings = measure(calls, worktree, args.rounds)
    elapsed = time.perf_counter() - started
    p50, p99 = statistics.median(timings), percentile(timings, 0.99)
    print(f"{len(timings)} decisions over {len(calls)} calls x {len(PROFILES)} profiles")
    print(f"p50 {p50:.3f} ms  p99 {p99:.3f} ms  max {max(timings):.3f} ms")
    report({"gate_decisions_per_s": round(len(timings) / elapsed), "gate_p99_ms": round(p99, 3)})


if __name__ == "__main__":
    main()
