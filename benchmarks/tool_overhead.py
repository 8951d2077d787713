"""SF's own cost per tool call, on a recorded trajectory of real units.

The trajectory (``benchmarks/fixtures/tool-trajectory.jsonl``, its header says how it
was recorded) is replayed unit by unit through the real agent loop: each recorded model
step is handed to the loop as the model's answer, and every tool call it holds goes
through everything SF does around a call — the engine's hooks (steering due now, pause
and stop, the session's activity, stuck detection), the permission gate (the shell
parse, path resolution, the project's rules, the once-approvals, the ``RiskDecision``
row committed), redaction of the arguments and the output, the trace row committed to
PostgreSQL and the live broadcast queued to the Redis channel layer. Only the tool's own
execution is stubbed, at the process boundary: the call returns the output recorded for
it instead of running a command or touching a file.

* ``p50_ms``/``p95_ms``/``p99_ms``: wall time of one tool call in the loop (the stub's
  own time is nothing), over every call of ``--passes`` passes. Target: p95 ≤ 2 ms.
* per tool kind, the same; ``queries_per_call``: SQL statements per call (median).
Needs team mode (DATABASE_URL and REDIS_URL from the environment or .sf/env); creates
and deletes a throw-away project.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import json
import statistics
import tempfile
import time
import uuid
from dataclasses import dataclass, replace
from decimal import Decimal
from pathlib import Path
from typing import Any

from _common import ROOT, django_team_mode, parse_args, percentile, report, throwaway_repo

django_team_mode()

from django.conf import settings  # noqa: E402
from django.db import connection  # noqa: E402

from agents_app.models import AgentSession  # noqa: E402
from agents_app.runtime.llm import ModelRouter, ModelStep, ToolCallRequest  # noqa: E402
from agents_app.runtime.loop import AgentLoop  # noqa: E402
from agents_app.runtime.tools import TOOLS, Finished, Tool, ToolContext  # noqa: E402
from agents_app.runtime.trace import TraceRecorder  # noqa: E402
from agents_app.services import project_create, session_create  # noqa: E402
from sf_core import live  # noqa: E402
from sf_core.actors import Actor  # noqa: E402
from tasks_app.engine.hooks import EngineHooks  # noqa: E402
from tasks_app.engine.unit import unit_gate  # noqa: E402
from tasks_app.models import Task, Unit  # noqa: E402
from tasks_app.schemas import plan_spec_parse  # noqa: E402
from tasks_app.services import plan_accept, plan_create  # noqa: E402

FIXTURE = ROOT / "benchmarks" / "fixtures" / "tool-trajectory.jsonl"


@dataclass
class RecordedUnit:
    steps: list[ModelStep]
    outputs: dict[str, list[str]]  # tool name → the outputs recorded, in order


def load_trajectory(path: Path) -> tuple[dict[str, Any], list[RecordedUnit]]:
    """The header and the recorded units (a ``unit`` record starts each one)."""
    header: dict[str, Any] = {}
    units: list[RecordedUnit] = []
    for line in path.read_text().splitlines():
        record = json.loads(line)
        kind = record["type"]
        if kind == "header":
            header = record
        elif kind == "unit":
            units.append(RecordedUnit(steps=[], outputs=collections.defaultdict(list)))
        elif kind == "model_step":
            calls = [
                ToolCallRequest(c["id"], c["name"], c["arguments"]) for c in record["tool_calls"]
            ]
            message = {"role": "assistant", "content": record["content"] or None}
            if calls:
                message["tool_calls"] = [
                    {
                        "id": c.id,
                        "type": "function",
                        "function": {"name": c.name, "arguments": c.arguments},
                    }
                    for c in calls
                ]
            units[-1].steps.append(
                ModelStep(
                    model=header.get("model", "recorded"),
                    content=record["content"],
                    tool_calls=calls,
                    tokens_in=record.get("tokens_in", 0),
                    tokens_out=record.get("tokens_out", 0),
                    cost=Decimal("0"),
                    message=message,
                )
            )
        elif kind == "tool_call":
            units[-1].outputs[record["name"]].append(record["output"])
    return header, units


class RecordedRouter(ModelRouter):
    """Hands the loop the recorded model steps, one per call, in order."""

    def __init__(self, steps: list[ModelStep]) -> None:
        super().__init__(model=steps[0].model if steps else "recorded")
        self.queue = list(steps)

    def step(
        self,
        messages: Any,
        tools: Any,
        response_format: Any = None,
        max_tokens: int | None = None,
    ) -> ModelStep:
        if not self.queue:  # a recorded unit that did not finish (failed, interrupted)
            raise RecordingEnded
        return self.queue.pop(0)


class RecordingEnded(Exception):
    """The recorded unit has no more model steps."""


def stubbed_tools(outputs: dict[str, list[str]]) -> dict[str, Tool]:
    """Every tool answers with its recorded output (the process boundary); finish and
    ask_user end the loop as they do for real."""
    served = {name: list(values) for name, values in outputs.items()}

    def stub(name: str) -> Any:
        def run(context: ToolContext, arguments: Any) -> str:
            if name == "finish":
                raise Finished(getattr(arguments, "summary", ""))
            recorded = served.get(name) or [""]
            return recorded.pop(0) if len(recorded) > 1 else recorded[0]

        return run

    return {name: replace(tool, run=stub(name)) for name, tool in TOOLS.items()}


class TimedLoop(AgentLoop):
    """The agent loop, timing each tool call and counting its SQL statements."""

    timings: list[tuple[str, float, int]]
    cpu: list[float]

    def _tool_call(self, call: ToolCallRequest, messages: list[dict[str, Any]]) -> Any:
        counter = [0]

        def count(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
            counter[0] += 1
            return execute(sql, params, many, context)

        started, cpu = time.perf_counter(), time.thread_time()
        with connection.execute_wrapper(count):
            ended = super()._tool_call(call, messages)
        self.timings.append((call.name, (time.perf_counter() - started) * 1000, counter[0]))
        self.cpu.append((time.thread_time() - cpu) * 1000)
        return ended


def setup(repo: Path, units: int) -> tuple[Any, AgentSession, list[Task]]:
    project = project_create(name=f"bench-tools-{uuid.uuid4().hex[:6]}", repo_path=str(repo))
    session = session_create(project=project, axes={"work_mode": "plan"})
    spec = {
        "summary": "recorded units",
        "tasks": [
            {"key": f"u{i}", "title": f"unit {i}", "acceptance_criteria": ["x"], "verify": ["true"]}
            for i in range(units)
        ],
    }
    plan = plan_create(session=session, spec=plan_spec_parse(spec), source="api")
    plan_accept(
        plan=plan,
        actor=Actor.system("bench"),
        autonomous=True,
        permission_profile="trusted",
        start=False,
    )
    session.refresh_from_db()
    return project, session, list(Task.objects.filter(plan=plan).order_by("position"))


def run_unit(
    session: AgentSession, task: Task, recorded: RecordedUnit, worktree: Path
) -> tuple[list[tuple[str, float, int]], list[float]]:
    unit = Unit.objects.create(task=task, attempt=Unit.objects.filter(task=task).count() + 1)
    hooks = EngineHooks(session_id=session.pk, task=task)
    loop = TimedLoop(  # wired as tasks_app.engine.unit wires a unit's loop
        router=RecordedRouter(recorded.steps),
        tools=stubbed_tools(recorded.outputs),
        context=ToolContext(worktree=worktree),
        gate=unit_gate(session, unit, worktree, hooks, {}, {}),
        recorder=TraceRecorder(session=session, unit_id=unit.pk),
        hooks=hooks,
        max_steps=len(recorded.steps) + 1,  # the recording, not the limit, ends it
    )
    loop.timings, loop.cpu = [], []
    with contextlib.suppress(RecordingEnded):
        ended = loop.run([{"role": "user", "content": "recorded unit"}])
        ENDINGS.append(f"{ended.outcome}: {ended.detail}"[:300])
    return loop.timings, loop.cpu


ENDINGS: list[str] = []  # how each replayed unit ended, for the error when none made a call


def summary(values: list[float]) -> dict[str, float]:
    return {
        "n": len(values),
        "p50_ms": round(statistics.median(values), 3),
        "p95_ms": round(percentile(values, 0.95), 3),
        "p99_ms": round(percentile(values, 0.99), 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--passes", type=int, default=30, help="times the trajectory is replayed")
    parser.add_argument("--trajectory", type=Path, default=FIXTURE)
    args = parse_args(parser, smoke={"passes": 1})
    assert not settings.CELERY_TASK_ALWAYS_EAGER, "needs REDIS_URL (team mode)"
    header, units = load_trajectory(args.trajectory)
    with tempfile.TemporaryDirectory() as tmp:
        repo = throwaway_repo(Path(tmp))
        project, session, tasks = setup(repo, len(units))
        timings: list[tuple[str, float, int]] = []
        cpu: list[float] = []
        try:
            run_unit(session, tasks[0], units[0], repo)  # warm-up: imports, first queries
            for _ in range(args.passes):
                for task, recorded in zip(tasks, units, strict=True):
                    wall, thread = run_unit(session, task, recorded, repo)
                    timings += wall
                    cpu += thread
            live.flush(timeout=30)
        finally:
            project.delete()
    if not timings:
        raise SystemExit(f"no tool call was made; the units ended so: {ENDINGS}")
    overall = summary([t for _, t, _ in timings])
    by_kind = {
        name: summary([t for n, t, _ in timings if n == name])
        for name in sorted({n for n, _, _ in timings})
    }
    queries = statistics.median(q for _, _, q in timings)
    cpu_figures = summary(cpu)
    print(f"trajectory: {header.get('note', '')}")
    print(f"{len(timings)} tool calls ({args.passes} passes over {len(units)} recorded units)")
    print(
        "per call: p50 {p50_ms} ms, p95 {p95_ms} ms, p99 {p99_ms} ms".format(**overall)
        + f"; {queries:g} SQL statements (median)"
    )
    print("this thread's CPU per call: p50 {p50_ms} ms, p95 {p95_ms} ms".format(**cpu_figures))
    for name, f in by_kind.items():
        print(
            f"  {name:12s} n={f['n']:4d}  p50 {f['p50_ms']:7.3f}"
            f"  p95 {f['p95_ms']:7.3f}  p99 {f['p99_ms']:7.3f} ms"
        )
    print(f"live updates: {live.live_stats()}")
    report(
        {
            "calls": len(timings),
            "p50_ms": overall["p50_ms"],
            "p95_ms": overall["p95_ms"],
            "p99_ms": overall["p99_ms"],
            "queries_per_call": queries,
            "cpu_p50_ms": cpu_figures["p50_ms"],
            "cpu_p95_ms": cpu_figures["p95_ms"],
            "by_kind": {
                name: {k: v for k, v in f.items() if k != "n"} for name, f in by_kind.items()
            },
        }
    )


if __name__ == "__main__":
    main()
