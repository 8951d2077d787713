"""SF side by side with other agent harnesses on one local model: who gets there.

Each task (benchmarks/harness_tasks: a template repository, an intent, a hidden grader)
runs in a fresh git repository once per harness and run, with the same model server,
the same wall-clock cap and one attempt; then its grader, which the harness never sees,
checks the final state (for SF the merged ``main``, for a peer the working tree).

* ``sf``: ``manage.py sf headless --intent … --autonomous`` (trusted, unattended).
* ``mini``: mini-swe-agent 2.4.6, its text-based litellm model class.
* ``aider``: aider-chat 0.86.2, the ``whole`` edit format.

A counting proxy in front of the server (one per harness and task) measures model calls
and prompt/completion tokens the same way for all, from the server's ``usage``.

    harness_compare.py --smoke                       # no model: prove every grader
    harness_compare.py --tasks median,paginate-bug --runs 1 --harness sf,mini,aider --cap 600

The last line is JSON: per harness the pass rate, the median wall time of passing runs,
model calls and tokens per task; SF's failures by cause (benchmarks/_harness_sf.py).
Needs team mode (.sf/env) for SF and the model (scripts/setup.sh --with-local-model).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

from _common import ROOT, report
from _harness_proxy import CountingProxy
from _harness_runs import LAUNCHERS, install_peer, run_capped, sf_env
from _harness_sf import classify, evidence, stream_result
from _harness_tasks import Task, final_state, grade, last_change_s, make_repo, pick, smoke
from _processes import start


def serve(model: str, threads: int, port: int) -> tuple[subprocess.Popen[str], str]:
    """scripts/local_model.py's server on 127.0.0.1: ``ready URL`` once it answers."""
    script = [sys.executable, str(ROOT / "scripts" / "local_model.py"), "serve"]
    server = start(
        [*script, "--model", model, "--port", str(port), "--threads", str(threads)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert server.stdout is not None
    line = server.stdout.readline()
    if not line.startswith("ready "):
        server.terminate()
        raise SystemExit(f"the model server did not start: {line!r}")
    return server, line.split()[1].removesuffix("/v1")


def settle(upstream: str, timeout: float = 900) -> float:
    """Wait until llama.cpp's server works on nothing: a call cut by the cap can keep it
    busy after its client has gone, and the next run must not queue behind it. Seconds
    waited; 0 when the server has no ``/slots`` endpoint. (Its prompt cache is not
    cleared: ``scripts/local_model.py`` starts it without the slot actions that would.)"""
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        try:
            with urllib.request.urlopen(f"{upstream}/slots", timeout=10) as answer:
                slots = json.load(answer)
        except (OSError, ValueError):
            return 0.0
        if not any(slot.get("is_processing") for slot in slots):
            break
        time.sleep(2)
    return round(time.monotonic() - started, 1)


def run_one(task: Task, harness: str, args: argparse.Namespace, upstream: str) -> dict[str, Any]:
    waited = settle(upstream)
    run_dir = Path(tempfile.mkdtemp(prefix=f"sf-compare-{harness}-{task.name}-"))
    repo = make_repo(task, run_dir / "repo")
    log = run_dir / f"{harness}.log"
    with CountingProxy(upstream, timeout=args.cap + 60) as proxy:
        launch = LAUNCHERS[harness](
            repo, task.intent, args.model, f"{proxy.url}/v1", run_dir, args.cap
        )
        ended = run_capped(launch, args.cap, log)
    counts = proxy.counts.as_dict()
    branch = "main" if harness == "sf" else None
    state = final_state(repo, run_dir / "graded", branch)
    passed, graded = grade(task, state)
    row: dict[str, Any] = {
        "task": task.name,
        "harness": harness,
        "passed": passed,
        "wall": round(ended.wall, 1),
        "server_busy_before_s": waited,
        "last_change": last_change_s(repo, branch),
        "exit": ended.code,
        "timed_out": ended.timed_out,
        **counts,
        "grader": graded[-300:],
        "dir": str(run_dir),
    }
    if harness == "sf" and not passed:
        units, text = evidence(repo)
        row["failure"] = classify(units, text, stream_result(log), ended.timed_out)
    if not args.keep and passed:
        shutil.rmtree(run_dir, ignore_errors=True)
        row["dir"] = ""
    return row


def summarise(rows: list[dict[str, Any]], harness: str) -> dict[str, Any]:
    mine = [r for r in rows if r["harness"] == harness]
    if not mine:
        return {}
    passing = [r for r in mine if r["passed"]]

    def per_task(key: str, among: list[dict[str, Any]] = mine) -> float | None:
        return round(sum(r[key] for r in among) / len(among), 1) if among else None

    return {
        "runs": len(mine),
        "passed": len(passing),
        "pass_rate": round(len(passing) / len(mine), 3),
        "median_pass_s": _median([r["wall"] for r in passing]),
        "median_pass_last_change_s": _median([r["last_change"] for r in passing]),
        "timeouts": sum(r["timed_out"] for r in mine),
        "calls_per_task": per_task("calls"),
        "prompt_tokens_per_task": per_task("prompt_tokens"),
        "completion_tokens_per_task": per_task("completion_tokens"),
        "prompt_evaluated_per_task": per_task("prompt_evaluated"),
        "prompt_tokens_per_passing_task": per_task("prompt_tokens", passing),
    }


def _median(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return round(statistics.median(known), 1) if known else None


def run_all(args: argparse.Namespace, tasks: list[Task], harnesses: list[str]) -> None:
    unavailable: dict[str, str] = {}
    for harness in [h for h in harnesses if h != "sf"]:
        try:
            install_peer(harness)
        except (OSError, RuntimeError, subprocess.CalledProcessError) as exc:
            unavailable[harness] = str(exc)
            print(f"{harness}: cannot be installed: {exc}", flush=True)
    ready = [h for h in harnesses if h not in unavailable]
    if "sf" in ready:  # SF's database as this checkout expects it (a no-op when it is)
        migrate = [sys.executable, str(ROOT / "manage.py"), "migrate", "--noinput"]
        subprocess.run(migrate, env={**os.environ, **sf_env()}, capture_output=True, check=True)
    server = None
    upstream = args.server
    if not upstream:
        server, upstream = serve(args.model, args.threads, args.port)
    load_before, started = os.getloadavg(), datetime.datetime.now(datetime.UTC)
    rows = []
    try:
        for run in range(args.runs):
            for task in tasks:
                for harness in ready:
                    row = run_one(task, harness, args, upstream)
                    print(f"run {run + 1} {task.name} {harness}: {_line(row)}", flush=True)
                    rows.append(row)
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=30)
    causes = Counter(r["failure"]["cause"] for r in rows if "failure" in r)
    figures = {h: summarise(rows, h) for h in ready}
    report(
        {
            "model": args.model,
            "cap_s": args.cap,
            "tasks": [t.name for t in tasks],
            "runs": args.runs,
            "started": started.isoformat(timespec="seconds"),
            "load_before": [round(x, 1) for x in load_before],
            "load_after": [round(x, 1) for x in os.getloadavg()],
            "harnesses": figures,
            "unavailable": unavailable,
            "sf_failures": dict(causes),
        }
    )


def _line(row: dict[str, Any]) -> str:
    verdict = "passed" if row["passed"] else "failed"
    text = f"{verdict} in {row['wall']:.0f} s (last change at {row['last_change']} s), "
    text += f"exit {row['exit']}, {row['calls']} calls, "
    text += f"{row['prompt_tokens']}+{row['completion_tokens']} tokens"
    if "failure" in row:
        failure = row["failure"]
        text += f"; cause {failure['cause']} {failure['signals']} ({failure['reason']})"
    return text + (f"; kept {row['dir']}" if row["dir"] else "")


def run_smoke(tasks: list[Task]) -> None:
    results = smoke(tasks)
    for result in results:
        verdict = "proven" if result["proven"] else f"NOT proven: {result['detail']}"
        print(f"{result['task']}: grader {verdict}", flush=True)
    failed = [str(r["task"]) for r in results if not r["proven"]]
    report({"smoke": True, "tasks": len(results), "proven": len(results) - len(failed)})
    if failed:
        raise SystemExit(1)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default="all", help="comma-separated task names, or all")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--harness", default="sf,mini,aider")
    parser.add_argument("--cap", type=float, default=600, help="wall-clock seconds per task")
    parser.add_argument("--smoke", action="store_true", help="no model: prove the graders")
    parser.add_argument("--model", default=os.environ.get("SF_LOCAL_MODEL", "qwen2.5-coder-1.5b"))
    parser.add_argument("--server", default="", help="reuse this model server (http://H:P)")
    parser.add_argument("--port", type=int, default=8133)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--keep", action="store_true", help="keep passing runs' folders too")
    args = parser.parse_args(argv)
    tasks = pick(args.tasks)
    if args.smoke:
        run_smoke(tasks)
        return
    harnesses = [h.strip() for h in args.harness.split(",") if h.strip()]
    unknown = [h for h in harnesses if h not in LAUNCHERS]
    if unknown or not harnesses or args.runs < 1 or args.cap <= 0:
        parser.error(f"--harness from {sorted(LAUNCHERS)} (unknown: {unknown}); --runs, --cap > 0")
    run_all(args, tasks, harnesses)


if __name__ == "__main__":
    main()
