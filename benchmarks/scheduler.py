"""Scheduler and board costs on large plans.

* ``waves_ms_1000``: median time to compute the dependency waves of a 1,000-task plan
  with random dependencies, loading its graph from the database (``plan_waves``);
  the pure computation alone is printed too. Target: under 100 ms.
* ``board_queries_100`` / ``board_queries_1000``: SQL queries to render the task board
  (the htmx partial) for a session with 100 and with 1,000 tasks. Target: the same
  number for both, at most 15.
Needs team mode (DATABASE_URL; taken from .sf/env if unset); creates and deletes a
throw-away project.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import uuid
from pathlib import Path

from _common import django_team_mode, median_seconds, parse_args, report, throwaway_repo

django_team_mode()

from django.contrib.auth.models import User  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402

from agents_app.models import AgentSession, Project  # noqa: E402
from agents_app.services import project_create, session_create  # noqa: E402
from sf_core.actors import Actor  # noqa: E402
from tasks_app.models import Plan  # noqa: E402
from tasks_app.scheduler import compute_waves  # noqa: E402
from tasks_app.schemas import plan_spec_parse  # noqa: E402
from tasks_app.selectors import plan_waves  # noqa: E402
from tasks_app.services import plan_accept, plan_create, plan_edges  # noqa: E402


def random_plan(size: int, seed: int) -> dict[str, object]:
    """Tasks depend on up to three earlier tasks: a DAG with long and wide parts."""
    rng = random.Random(seed)
    tasks = []
    for index in range(size):
        earlier = rng.sample(range(index), k=min(index, rng.randint(0, 3)))
        tasks.append(
            {
                "key": f"t{index}",
                "title": f"task {index}",
                "acceptance_criteria": ["it works"],
                "verify": ["true"],
                "depends_on": [
                    {"task": f"t{e}", "condition": rng.choice(["success", "success", "always"])}
                    for e in earlier
                ],
            }
        )
    return {"summary": f"{size} random tasks", "tasks": tasks}


def accepted_plan(project: Project, size: int) -> tuple[AgentSession, Plan]:
    session = session_create(project=project, axes={"work_mode": "plan"})
    plan = plan_create(session=session, spec=plan_spec_parse(random_plan(size, size)), source="api")
    plan_accept(plan=plan, actor=Actor.system("bench"), autonomous=True)
    return session, plan


def board_queries(client: Client, session: AgentSession) -> int:
    with CaptureQueriesContext(connection) as queries:
        response = client.get(f"/tasks/?session={session.pk}", HTTP_HX_REQUEST="true")
        assert response.status_code == 200, response.status_code
    return len(queries)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=15)
    args = parse_args(parser, smoke={"runs": 1})
    tag = uuid.uuid4().hex[:8]
    with tempfile.TemporaryDirectory() as tmp:
        project = project_create(name=f"bench-{tag}", repo_path=str(throwaway_repo(Path(tmp))))
        user = User.objects.create_superuser(f"bench-{tag}", password=None)  # may view the board
        try:
            client = Client(HTTP_HOST="127.0.0.1")
            client.force_login(user)
            small, _ = accepted_plan(project, 100)
            large, plan = accepted_plan(project, 1000)
            keys = list(plan.tasks.order_by("position").values_list("key", flat=True))
            edges = plan_edges(plan)
            pure = median_seconds(lambda: compute_waves(keys, edges), runs=args.runs)
            loaded = median_seconds(lambda: plan_waves(plan), runs=args.runs)
            waves = plan_waves(plan)
            queries_100, queries_1000 = board_queries(client, small), board_queries(client, large)
            board_ms = median_seconds(lambda: board_queries(client, large), runs=5) * 1000
        finally:
            project.delete()
            user.delete()
    print(f"1000 tasks, {len(edges)} dependencies, {len(waves)} waves")
    print(
        f"waves: {pure * 1000:.2f} ms pure, {loaded * 1000:.2f} ms with the graph loaded from SQL"
    )
    print(f"board: {queries_100} queries for 100 tasks, {queries_1000} for 1000")
    print(f"board: 1000-task render {board_ms:.0f} ms")
    report(
        {
            "waves_ms_1000": round(loaded * 1000, 2),
            "board_queries_100": queries_100,
            "board_queries_1000": queries_1000,
        }
    )


if __name__ == "__main__":
    main()
