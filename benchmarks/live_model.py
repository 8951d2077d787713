"""The engine against a real model served on this machine: how often it gets there.

Five tiny tasks, each stated as an intent to ``sf headless --intent … --autonomous``
(planning, units in worktrees, gate, verify, trusted review, merge), ``--runs`` times
each, against ``scripts/local_model.py serve`` (llama.cpp, the model's own sampling).
A run passes when headless exits 0 *and* a check of ours, which the model never sees,
holds on the merged ``main``.

* ``live_pass_rate``: passed runs / all runs (per task in the lines above the JSON).
* ``intent_to_merge_median_s``: wall time of the passed runs, intent to merged commit.
* ``tokens_per_s``: the model's output tokens over the time spent in model steps.
* ``overhead_share``: SF's own share of the units' wall time — what is neither a model
  step, nor a tool call (the project's commands), nor the verify commands. Target < 5 %.

Needs team mode (.sf/env) and the model (scripts/setup.sh --with-local-model).
``--smoke`` leaves the model out: one run of ``examples/demo-trace.jsonl`` (recorded
from this model) replayed through the same headless path, checks and figures.
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from _common import ROOT, django_team_mode, parse_args, report
from _processes import start

django_team_mode()

from agents_app.models import AgentSession, TraceEvent  # noqa: E402
from tasks_app.models import TaskTransition, Unit  # noqa: E402
from tests.live.unattended import BOUNDS, answers_write, repo_make  # noqa: E402


@dataclass(frozen=True)
class Case:
    name: str
    files: dict[str, str]  # empty: a copy of examples/sample-repo
    intent: str
    check: str  # run on main after the merge
    replay: str = ""  # a recorded trace played instead of the model (--smoke)


CASES = [
    Case(
        "hello",
        {"README.md": "# notes\n"},
        "Create a file hello.txt whose only line is: hello",
        'test "$(cat hello.txt)" = hello',
    ),
    Case(
        "gitignore",
        {"README.md": "# app\n"},
        "Create a .gitignore file that ignores the __pycache__/ folder",
        "grep -qx '__pycache__/' .gitignore",
    ),
    Case(
        "license-line",
        {"README.md": "# app\n\nA tiny app.\n"},
        "Add a last line 'License: MIT' to README.md",
        "tail -n 1 README.md | grep -q 'License: MIT'",
    ),
    Case(
        "subtract",
        {"calc.py": "def add(a, b):\n    return a + b\n"},
        "Add a function subtract(a, b) to calc.py that returns a minus b",
        'python3 -c "from calc import subtract; assert subtract(5, 3) == 2"',
    ),
    Case(
        "shout",
        {},
        "Add a --shout flag to greet.py that prints the greeting in capitals",
        'test "$(python3 greet.py --shout Ada)" = "HELLO, ADA!"',
    ),
]


# The demo's recorded unit: farewell.py added to the sample greeter, by this model.
REPLAYED = Case(
    "farewell (replayed)",
    {},
    "",
    "python3 -c \"from farewell import farewell; assert farewell('Ada') == 'Goodbye, Ada!'\"",
    replay=str(ROOT / "examples" / "demo-trace.jsonl"),
)


def serve(model: str, threads: str) -> tuple[subprocess.Popen[str], str]:
    script = [sys.executable, str(ROOT / "scripts" / "local_model.py"), "serve"]
    server = start(
        [*script, "--model", model, "--port", "8097", "--threads", threads],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert server.stdout is not None
    line = server.stdout.readline()
    if not line.startswith("ready "):
        raise SystemExit(f"the model server did not start: {line!r}")
    return server, line.split()[1]


def run_once(case: Case, model: str, api_base: str, folder: Path) -> dict[str, object]:
    repo = repo_make(case.files, folder)
    # The live tests' bounds: 15 model steps and 150 s a unit, 4 attempts a task at most.
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", **BOUNDS}
    for mode in ("FAST", "SMART", "DEEP"):
        env |= {f"SF_MODEL_{mode}": f"openai/{model}", f"SF_MODEL_{mode}_API_BASE": api_base}
    answers = answers_write(repo)
    started = time.monotonic()
    done = subprocess.run(
        [
            sys.executable,
            "manage.py",
            "sf",
            "headless",
            "--project",
            str(repo),
            *(["--replay", case.replay] if case.replay else ["--intent", case.intent]),
            "--autonomous",
            "--permission-profile",
            "trusted",
            "--answers",
            str(answers),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )
    wall = time.monotonic() - started
    checked = subprocess.run(["bash", "-c", case.check], cwd=repo, capture_output=True)
    session = AgentSession.objects.filter(project__repo_path=str(repo.resolve())).last()
    return {
        "case": case.name,
        "code": done.returncode,
        "wall": wall,
        "passed": done.returncode == 0 and checked.returncode == 0,
        **unit_times(session),
    }


def unit_times(session: AgentSession | None) -> dict[str, float]:
    """Seconds in units, in model steps, in tool calls and in verification; tokens out."""
    times = {"unit": 0.0, "model": 0.0, "tools": 0.0, "verify": 0.0, "tokens_out": 0.0}
    if session is None:
        return times
    for unit in Unit.objects.filter(task__plan__session=session, finished_at__isnull=False):
        times["unit"] += (unit.finished_at - unit.started_at).total_seconds()
        times["verify"] += verification_seconds(unit)
    for event in TraceEvent.objects.filter(
        unit__task__plan__session=session, finished_at__isnull=False
    ):
        spent = (event.finished_at - event.started_at).total_seconds()
        times["model" if event.kind == "model_step" else "tools"] += spent
        times["tokens_out"] += event.tokens_out
    return times


def verification_seconds(unit: Unit) -> float:
    """From the move to verifying to the next move of the unit's task."""
    moves = list(
        TaskTransition.objects.filter(
            task_id=unit.task_id, created_at__gte=unit.started_at, created_at__lte=unit.finished_at
        ).order_by("created_at", "pk")
    )
    total = 0.0
    for move, after in itertools.pairwise(moves):
        if move.to_status == "verifying":
            total += (after.created_at - move.created_at).total_seconds()
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--model", default=os.environ.get("SF_LOCAL_MODEL", "qwen2.5-coder-1.5b"))
    parser.add_argument("--threads", default="2")
    parser.add_argument("--cases", default=",".join(c.name for c in CASES))
    args = parse_args(parser, smoke={"runs": 1})
    chosen = [c for c in CASES if c.name in args.cases.split(",")]
    if args.smoke:
        chosen = [REPLAYED]
    server, api_base = (None, "") if args.smoke else serve(args.model, args.threads)
    results = []
    try:
        with tempfile.TemporaryDirectory(prefix="sf-live-bench-") as folder:
            for run in range(args.runs):
                for case in chosen:
                    result = run_once(
                        case, args.model, api_base, Path(folder) / f"{case.name}-{run}"
                    )
                    print(
                        f"{case.name} run {run + 1}: exit {result['code']}, "
                        f"{'passed' if result['passed'] else 'failed'}, {result['wall']:.0f} s",
                        flush=True,
                    )
                    results.append(result)
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=30)
    summarise(results, args.model)


def summarise(results: list[dict[str, object]], model: str) -> None:
    for case in dict.fromkeys(str(r["case"]) for r in results):
        mine = [r for r in results if r["case"] == case]
        print(f"{case}: {sum(bool(r['passed']) for r in mine)}/{len(mine)} passed")

    def total(key: str) -> float:
        return sum(float(r[key]) for r in results)  # type: ignore[arg-type]

    passed = [float(r["wall"]) for r in results if r["passed"]]  # type: ignore[arg-type]
    own = total("unit") - total("model") - total("tools") - total("verify")
    report(
        {
            "model": model,
            "runs": len(results),
            "live_pass_rate": round(sum(bool(r["passed"]) for r in results) / len(results), 3),
            "intent_to_merge_median_s": round(statistics.median(passed), 1) if passed else None,
            "tokens_per_s": round(total("tokens_out") / total("model"), 1)
            if total("model")
            else None,
            "overhead_share": round(own / total("unit"), 4) if total("unit") else None,
        }
    )


if __name__ == "__main__":
    main()
