"""Record the trajectory ``tool_overhead.py`` replays: real units of a real model on a
copy of this repository, exported as SF records them (``sf record``'s format).

    .venv/bin/python scripts/local_model.py serve --port 8080 &     # the local model
    .venv/bin/python benchmarks/record_trajectory.py --api-base http://127.0.0.1:8080/v1

It clones this checkout's HEAD into a folder under the home directory (a repository
root SF accepts), runs ``sf headless --autonomous --permission-profile trusted`` on
``fixtures/trajectory-plan.yaml`` (small tasks that make an agent read, search, list,
run and write) with every model mode on the given server, then writes every unit the
session ran — passed or failed, in order — to ``fixtures/tool-trajectory.jsonl``: a
header saying how it was made, then per unit a ``unit`` line and its trace (model
steps with their tool calls, and each call with the output it had). ``--session ID``
exports a session already run instead. ``--smoke`` leaves the model out: it exports
``examples/demo-trace.jsonl`` alone to a temporary file.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from _common import ROOT, django_team_mode, machine, parse_args

FIXTURES = ROOT / "benchmarks" / "fixtures"
MODEL = "openai/qwen2.5-coder-1.5b"


def record(api_base: str, plan: Path, steps: int) -> int:
    """Run the plan on a fresh clone with the model at ``api_base``; the session's id."""
    work = Path(tempfile.mkdtemp(prefix="sf-trajectory-", dir=Path.home()))
    clone = work / "sf"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "SF_UNIT_MAX_STEPS": str(steps)}
    for mode in ("FAST", "SMART", "DEEP"):
        env |= {
            f"SF_MODEL_{mode}": MODEL,
            f"SF_MODEL_{mode}_API_BASE": api_base,
            f"SF_MODEL_{mode}_API_KEY": "local",
        }
    command = [sys.executable, "manage.py", "sf", "headless", "--project", str(clone)]
    command += ["--plan-file", str(plan), "--autonomous", "--permission-profile", "trusted"]
    done = subprocess.run(
        [*command, "--output-format", "json"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    shutil.rmtree(work, ignore_errors=True)
    return int(json.loads(done.stdout.strip().splitlines()[-1])["session"])


def export(sessions: list[int], traces: list[Path], out: Path, note: str) -> int:
    """Write the sessions' units, then each recorded trace file (``sf record``'s format,
    one unit each), to ``out``; how many tool calls they hold."""
    from agents_app.runtime.recording import trace_export
    from tasks_app.models import Unit

    units = Unit.objects.filter(task__plan__session_id__in=sessions).order_by("started_at", "pk")
    lines: list[dict[str, object]] = []
    for unit in units:
        lines.append(
            {"type": "unit", "task": unit.task.key, "attempt": unit.attempt, "status": unit.status}
        )
        lines += trace_export(unit_id=unit.pk, header={})[1:]
    for trace in traces:
        records = [json.loads(line) for line in trace.read_text().splitlines() if line.strip()]
        lines.append({"type": "unit", "from": trace.name, "note": records[0].get("note", "")})
        lines += records[1:]
    calls = sum(1 for r in lines if r["type"] == "tool_call")
    header = {
        "type": "header",
        "format": "sf-trajectory/1",
        "model": MODEL,
        "note": note,
        "units": sum(1 for r in lines if r["type"] == "unit"),
        "tool_calls": calls,
        "machine": machine(),
        "exported_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    out.write_text("".join(json.dumps(r) + "\n" for r in [header, *lines]))
    return calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--api-base", help="the model server, e.g. http://127.0.0.1:8080/v1")
    parser.add_argument(
        "--session", type=int, nargs="+", help="export these sessions instead of recording"
    )
    parser.add_argument(
        "--trace", type=Path, nargs="*", default=[], help="recorded traces to add (sf record)"
    )
    parser.add_argument("--plan", type=Path, default=FIXTURES / "trajectory-plan.yaml")
    parser.add_argument("--steps", type=int, default=25, help="model steps per unit")
    parser.add_argument("--out", type=Path, default=FIXTURES / "tool-trajectory.jsonl")
    parser.add_argument("--note", default="")
    smoke_out = Path(tempfile.mkdtemp(prefix="sf-trajectory-smoke-")) / "trajectory.jsonl"
    demo = ROOT / "examples" / "demo-trace.jsonl"
    args = parse_args(parser, smoke={"session": [], "trace": [demo], "out": smoke_out})
    django_team_mode()
    if args.smoke:
        sessions: list[int] = []
    elif args.session:
        sessions = args.session
    elif args.api_base:
        sessions = [record(args.api_base, args.plan, args.steps)]
    else:
        raise SystemExit("record_trajectory.py: give --api-base URL (the model) or --session ID")
    note = args.note or (
        f"Recorded by benchmarks/record_trajectory.py: every unit of session(s) {sessions}, "
        f"{MODEL} (scripts/local_model.py) working through {args.plan.name} on a clone of "
        "this repository with sf headless --autonomous --permission-profile trusted."
    )
    calls = export(sessions, args.trace, args.out, note)
    if args.smoke:
        shutil.rmtree(smoke_out.parent)
    print(json.dumps({"sessions": sessions, "tool_calls": calls, "out": str(args.out)}))


if __name__ == "__main__":
    main()
