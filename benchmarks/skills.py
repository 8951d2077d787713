"""Skills at 200 folders: sync time and what the skills list costs in a unit's prompt.

* ``sync_cold_ms_200``: median time of ``project_skills_sync`` reading 200 new skill
  folders (every row deleted before each run, outside the timing).
* ``sync_warm_ms_200``: median time of the same sync when nothing changed (what runs
  before every unit). Target: under 200 ms.
* ``list_tokens_<window>`` and shares: the skills list (``skills_listing``) a unit of a
  model with that context window gets, in tokens (litellm's count for ``MODEL``), as a
  share of the whole first request of the unit (system prompt + brief with the list +
  every tool schema) and as a share of the context window. Target: the list under 2 %.
  ``LIST_SHARE`` caps the list at 2 % of the *window* (assuming 4 characters a token),
  so at 200 skills it is cut to fit and its share of the *prompt* is far larger than
  2 %: both are printed, so neither is mistaken for the other.

Needs team mode (DATABASE_URL; taken from .sf/env if unset); creates and deletes a
throw-away project and its temporary repository.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from _common import django_team_mode, median_seconds, parse_args, report, throwaway_repo

django_team_mode()

from agents_app.models import Project  # noqa: E402
from agents_app.runtime.context import token_count  # noqa: E402
from agents_app.runtime.tools import TOOLS  # noqa: E402
from skills_app.loader import skills_available, skills_listing  # noqa: E402
from skills_app.models import Skill  # noqa: E402
from skills_app.parsing import PROJECT_SKILLS  # noqa: E402
from skills_app.sync import project_skills_sync  # noqa: E402
from tasks_app.engine.prompts import unit_messages  # noqa: E402
from tasks_app.models import Task  # noqa: E402

MODEL = "gpt-4o"  # any model litellm counts offline; the list's words are what matter
WINDOWS = (8_192, 32_768, 128_000, 200_000)
WORDS = [
    "release",
    "migration",
    "schema",
    "deploy",
    "lint",
    "format",
    "test",
    "coverage",
    "docs",
    "changelog",
    "api",
    "cli",
    "database",
    "cache",
    "queue",
    "worker",
    "docker",
    "compose",
    "python",
    "rust",
    "typescript",
    "frontend",
    "backend",
]
BODY = """# When to use it

Use this skill when the task touches {topic}. Read the checklist first.

## Steps

1. Run `scripts/check.sh` and read its output.
2. Change only the files the task names; keep the {topic} conventions.
3. Re-run the verify commands.

```sh
./scripts/check.sh --strict
```
"""


def skill_tree(root: Path, count: int) -> None:
    """``count`` skill folders, each a SKILL.md (~0.6 KB), a script and a checklist;
    every tenth has an eval case."""
    for index in range(count):
        topic = f"{WORDS[index % len(WORDS)]} {WORDS[(index * 7 + 3) % len(WORDS)]}"
        name = f"skill-{index:03d}-{topic.replace(' ', '-')}"
        folder = root / PROJECT_SKILLS / name
        (folder / "scripts").mkdir(parents=True)
        (folder / "checklists").mkdir()
        description = (
            f"How this project handles {topic} - the commands to run, the files to read "
            f"first and the mistakes reviewers reject (skill {index})."
        )
        front = f"---\nname: {name}\ndescription: {description}\nside-effects: code-edits\n---\n"
        (folder / "SKILL.md").write_text(front + BODY.format(topic=topic))
        (folder / "scripts" / "check.sh").write_text("#!/bin/sh\nexec make check\n")
        (folder / "checklists" / "review.md").write_text(f"- {topic} reviewed\n")
        if index % 10 == 0:
            case = folder / "evals" / "basic"
            case.mkdir(parents=True)
            (case / "task.md").write_text(f"Fix the {topic} check.\n")
            (case / "grader.py").write_text("def grade(workspace):\n    return True\n")


def sync_times(project: Project, runs: int) -> dict[str, float]:
    cold: list[float] = []
    for _ in range(runs):
        Skill.objects.filter(project=project).delete()  # not timed
        started = time.perf_counter()
        project_skills_sync(project)
        cold.append(time.perf_counter() - started)
    warm = median_seconds(lambda: project_skills_sync(project), runs=runs * 4)
    return {
        "sync_cold_ms_200": round(statistics.median(cold) * 1000, 1),
        "sync_warm_ms_200": round(warm * 1000, 1),
    }


def prompt_costs(project: Project) -> dict[str, Any]:
    skills = skills_available(project)
    invalid = [skill.problem for skill in skills if not skill.valid]
    assert not invalid, invalid[:3]
    task = Task(
        key="api",
        title="Add a --json flag to the deploy command",
        description="The deploy CLI prints text only; scripts need its result as JSON.",
        acceptance_criteria=[
            "sf deploy --json prints one JSON object",
            "the text output is unchanged without the flag",
            "the new flag is documented and tested",
        ],
        verify=["pytest -q tests/test_deploy.py", "ruff check ."],
    )
    task_text = f"{task.title}\n{task.description}\n{' '.join(t for _, t in task.criteria)}"
    tools = [tool.openai_spec() for tool in TOOLS.values()]
    figures: dict[str, Any] = {"skills": len(skills), "model_counted": MODEL}
    without = token_count(MODEL, unit_messages(task=task, skills="", previous=None), tools)
    figures["unit_prompt_tokens_without_list"] = without
    for window in WINDOWS:
        listing = skills_listing(skills, task_text, window)
        shown = listing.count("\n- ")
        list_tokens = token_count(MODEL, [{"role": "user", "content": listing}], []) - (
            token_count(MODEL, [{"role": "user", "content": ""}], [])
        )
        whole = token_count(MODEL, unit_messages(task=task, skills=listing, previous=None), tools)
        figures[f"list_skills_shown_{window}"] = shown
        figures[f"list_tokens_{window}"] = list_tokens
        figures[f"unit_prompt_tokens_{window}"] = whole
        figures[f"list_share_of_prompt_pct_{window}"] = round(100 * list_tokens / whole, 1)
        figures[f"list_share_of_window_pct_{window}"] = round(100 * list_tokens / window, 2)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skills", type=int, default=200)
    parser.add_argument("--runs", type=int, default=5)
    options = parse_args(parser, smoke={"skills": 10, "runs": 1})
    workdir = Path(tempfile.mkdtemp(prefix="sf-bench-skills-"))
    repo = throwaway_repo(workdir)
    skill_tree(repo, options.skills)
    project = Project.objects.create(name=f"bench-skills-{uuid.uuid4().hex[:8]}", repo_path=repo)
    try:
        figures = sync_times(project, options.runs)
        figures |= prompt_costs(project)
    finally:
        project.delete()
        shutil.rmtree(workdir, ignore_errors=True)
    figures["runs"] = options.runs
    report(figures)


if __name__ == "__main__":
    main()
