"""Permission gate throughput and latency: decisions per second and p99 per decision.

Each decision is timed on its own, parse included (nothing is cached between calls),
over a mixed corpus: the bypass corpus, the unmodelled-command corpus and its harmless
twins, ordinary agent commands and file tool calls, under each profile, in a scratch
worktree with a symlink that points out of it and a skill eval's hidden answers.
``gate_p99_ms`` is the median over passes of each pass's wall-clock p99;
``gate_cpu_p99_ms`` is the p99 of thread CPU time, which pre-emption by other processes
on a shared machine does not inflate (one scheduler tick is 4 ms here). The last line
is JSON: ``{"gate_cpu_p99_ms": …, "gate_decisions_per_s": …, "gate_p99_ms": …}``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from _common import parse_args, percentile, report

from agents_app.gate.policy import decide
from agents_app.gate.schemas import GateContext, ToolCall
from agents_app.tests.bypass_corpus import CORPUS
from agents_app.tests.unmodeled_corpus import TWINS, UNMODELED

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


def scratch_worktree(base: Path) -> Path:
    root = base / "wt"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / ".sf").mkdir()
    for name in ("app.py", "parser.py", "cli.py"):
        (root / "src" / name).write_text("print(1)\n")
    os.symlink("/etc", root / "etc-link")
    # A skill eval case's hidden answers: recursive reads look for them on disk.
    hidden = root / ".agents" / "skills" / "demo" / "evals" / "case1" / "hidden"
    hidden.mkdir(parents=True)
    (hidden / "answer.md").write_text("x\n")
    return root


def corpus() -> list[ToolCall]:
    commands = (*ORDINARY, *(e.command for e in UNMODELED), *(c for c, _ in TWINS))
    calls = [ToolCall(tool="run_command", input={"command": c}) for c in commands]
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


def measure(calls: list[ToolCall], worktree: Path, rounds: int) -> tuple[list[float], list[float]]:
    """Wall and thread-CPU milliseconds of each decision."""
    contexts = [
        GateContext(
            permission_profile=p, run_control="autonomous", work_mode="build", worktree=worktree
        )
        for p in PROFILES
    ]
    wall: list[float] = []
    cpu: list[float] = []
    clock, cpu_clock = time.perf_counter_ns, time.thread_time_ns
    for _ in range(rounds):
        for ctx in contexts:
            for call in calls:
                started, cpu_started = clock(), cpu_clock()
                decide(call, ctx)
                cpu.append((cpu_clock() - cpu_started) / 1e6)
                wall.append((clock() - started) / 1e6)
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--passes", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=6, help="rounds over the corpus per pass")
    args = parse_args(parser, smoke={"passes": 1, "rounds": 1})
    with tempfile.TemporaryDirectory(prefix="sf-gate-bench-") as base:
        run(scratch_worktree(Path(base)), args.passes, args.rounds)


def run(worktree: Path, passes: int, rounds: int) -> None:
    calls = corpus()
    measure(calls, worktree, 1)  # warm-up: imports, regex and lru caches
    p99s, walls, cpus = [], [], []
    started = time.perf_counter()
    for number in range(passes):
        wall, cpu = measure(calls, worktree, rounds)
        p99s.append(percentile(wall, 0.99))
        walls += wall
        cpus += cpu
        print(f"pass {number + 1}: p50 {statistics.median(wall):.3f} ms  p99 {p99s[-1]:.3f} ms")
    elapsed = time.perf_counter() - started
    print(f"{len(walls)} decisions over {len(calls)} calls x {len(PROFILES)} profiles")
    print(f"wall: p50 {statistics.median(walls):.3f} ms  p99 {percentile(walls, 0.99):.3f} ms")
    print(f"cpu:  p50 {statistics.median(cpus):.3f} ms  p99 {percentile(cpus, 0.99):.3f} ms")
    # The median pass: one burst of load from other processes moves one pass, not the figure.
    figure = statistics.median(p99s)
    report(
        {
            "gate_decisions_per_s": round(len(walls) / elapsed),
            "gate_p99_ms": round(figure, 3),
            "gate_cpu_p99_ms": round(percentile(cpus, 0.99), 3),
        }
    )


if __name__ == "__main__":
    main()
