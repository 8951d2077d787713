"""The task board at 1,000 tasks: time to render it, and the SQL it takes.

A throw-away project with a 1,000-task plan in every state (``_world``: 55 % done,
review with real branches that conflict, running units, failed ones with three
attempts, the rest waiting) and the board's htmx partial requested through Django's
test client, as a browser's page change or a live re-render asks for it:

* ``board_render_ms_1000``: median wall time of page 1 (target ≤ 50 ms);
* ``board_render_cpu_ms_1000``: the same in this process's CPU time (less noisy on a
  shared machine: pre-emption is not counted);
* ``board_render_ms_page10`` and ``board_render_ms_filtered`` (failed tasks only);
* ``board_all_rows_ms_1000``: every row in one render, as the board was before pages;
* ``board_queries_100`` / ``board_queries_1000``: the same number whatever the size.

Needs team mode (DATABASE_URL; taken from .sf/env if unset).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
import uuid
from pathlib import Path

from _common import django_team_mode, parse_args, report

# What one render costs: the web's shared render of the last second (SF_PAGE_CACHE,
# sf_core/microcache.py) would answer every run after the first; pageload.py measures
# what people get with it.
os.environ["SF_PAGE_CACHE"] = "0"

django_team_mode()

import _world  # noqa: E402
from django.db import connection  # noqa: E402
from django.template.loader import render_to_string  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402

from tasks_app.board import task_board  # noqa: E402


def timed(function: object, runs: int) -> tuple[float, float]:
    """Median wall and CPU milliseconds of ``function()`` over ``runs``, after one warm-up."""
    assert callable(function)
    function()
    walls, cpus = [], []
    for _ in range(runs):
        wall, cpu = time.perf_counter(), time.process_time()
        function()
        walls.append((time.perf_counter() - wall) * 1000)
        cpus.append((time.process_time() - cpu) * 1000)
    return statistics.median(walls), statistics.median(cpus)


def get(client: Client, path: str) -> None:
    response = client.get(path, HTTP_HX_REQUEST="true")
    assert response.status_code == 200, (path, response.status_code)


def queries(client: Client, path: str) -> int:
    with CaptureQueriesContext(connection) as captured:
        get(client, path)
    return len(captured)


def all_rows(session_id: int) -> None:
    board = task_board(session_id=session_id)
    context = {"board": board, "all_statuses": [], "selected_statuses": [], "ws_query": ""}
    render_to_string("tasks_app/board.html#board", context)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--tasks", type=int, default=1000)
    args = parse_args(parser, smoke={"runs": 1, "tasks": 100})
    tag = uuid.uuid4().hex[:8]
    with tempfile.TemporaryDirectory() as big_dir, tempfile.TemporaryDirectory() as small_dir:
        world = _world.build(Path(big_dir), tag=tag, tasks=args.tasks, trace_events=2)
        small = _world.build(Path(small_dir), tag=f"{tag}s", tasks=100, trace_events=2)
        try:
            client = Client(HTTP_HOST="127.0.0.1")
            client.force_login(world.user)
            board = f"/tasks/?session={world.session.pk}"
            page1 = timed(lambda: get(client, board), args.runs)
            page10 = timed(lambda: get(client, board + "&page=10"), args.runs)
            failed = timed(lambda: get(client, board + "&status=failed"), args.runs)
            everything = timed(lambda: all_rows(world.session.pk), max(3, args.runs // 3))
            small_client = Client(HTTP_HOST="127.0.0.1")
            small_client.force_login(small.user)
            count_small = queries(small_client, f"/tasks/?session={small.session.pk}")
            count_big = queries(client, board)
        finally:
            world.delete()
            small.delete()
    print(f"{args.tasks} tasks, page 1: median {page1[0]:.1f} ms wall, {page1[1]:.1f} ms CPU")
    print(f"page 10: {page10[0]:.1f} ms; failed only: {failed[0]:.1f} ms")
    print(f"every row in one render (the board before pages): {everything[0]:.1f} ms")
    print(f"queries: {count_small} at 100 tasks, {count_big} at {args.tasks}")
    report(
        {
            "board_render_ms_1000": round(page1[0], 1),
            "board_render_cpu_ms_1000": round(page1[1], 1),
            "board_render_ms_page10": round(page10[0], 1),
            "board_render_ms_filtered": round(failed[0], 1),
            "board_all_rows_ms_1000": round(everything[0], 1),
            "board_queries_100": count_small,
            "board_queries_1000": count_big,
            "runs": args.runs,
        }
    )


if __name__ == "__main__":
    main()
