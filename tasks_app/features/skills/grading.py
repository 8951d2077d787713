"""Grading one skill eval trial: what the grader is given, and what it answers.

The interface (docs/skill-evals.md): ``python grader.py`` runs in a subprocess with
its working directory the trial's workspace, a 30 s timeout, and these variables:

``SF_EVAL_WORKSPACE``  the workspace: the merged repository when the task is done,
                       otherwise the unit's worktree as it left it
``SF_EVAL_HIDDEN``     the case's ``hidden/`` folder (only the grader sees it)
``SF_EVAL_TRACE``      the units' trace as JSON Lines (header, model steps, tool calls
                       with their outputs)
``SF_EVAL_RESULT``     a JSON file: task and unit status, verification, summary, files
                       changed, skills loaded, cost
``SF_EVAL_ANSWER``     ``answer.json``: ``{"summary": <the finish summary>}``

It prints ``{"checks": [{"name", "passed", "detail"}]}`` as its last stdout line; a
non-zero exit fails the trial too. ``skills_app/grader_kit.py`` does this for a grader.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings

from agents_app.runtime.recording import trace_export
from sf_core.git import Checkout, git
from skills_app.models import SkillUse, SkillUseKind
from skills_app.parsing import CASE_GRADER
from tasks_app.engine.worktrees import worktree_checked
from tasks_app.models import Task, TaskStatus, Unit
from tasks_app.workspaces import workspace_of

GRADER_TIMEOUT = 30.0  # seconds
DETAIL_SHOWN = 2000  # characters of a check's detail (or a grader's stderr) stored
# What a grader's process inherits: nothing of SF's own environment (its database URL,
# model keys) but what a Python script needs to run.
INHERITED = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT")


@dataclass(frozen=True)
class Trial:
    task: Task
    repo: Path  # the trial's repository (its main checkout)
    folder: Path  # everything of the trial: repo/, result.json, trace.jsonl, answer.json
    case_dir: Path

    def worktree(self) -> Path | None:
        """The task's worktree, if the engine kept it (the task is not done)."""
        path = workspace_of(self.task).path
        return path if path.is_dir() else None

    def workspace(self) -> Path:
        return self.worktree() or self.repo

    def checkout(self) -> Checkout | Path:
        """What SF's git runs on: the task's worktree once checked, else the repository."""
        return worktree_checked(workspace_of(self.task)) if self.worktree() else self.repo


def trial_grade(trial: Trial) -> tuple[list[dict[str, Any]], str]:
    """Write what the grader reads, run it; returns its checks and an error ("" if it
    answered)."""
    trial.task.refresh_from_db()
    if trial.task.status == TaskStatus.DONE:
        # The merge moved main without touching the checkout: show the merged tree.
        git("reset", "--hard", "-q", cwd=trial.repo, check=False)
    files = _inputs_write(trial)
    return grader_run(trial.case_dir / CASE_GRADER, cwd=trial.workspace(), env=files)


def grader_run(
    grader: Path, *, cwd: Path, env: dict[str, str], timeout: float = GRADER_TIMEOUT
) -> tuple[list[dict[str, Any]], str]:
    """Run ``grader``; its checks, or an error saying why there are none."""
    environment = {key: os.environ[key] for key in INHERITED if key in os.environ}
    environment |= {"PYTHONPATH": str(settings.BASE_DIR), "PYTHONDONTWRITEBYTECODE": "1", **env}
    try:
        done = subprocess.run(
            [sys.executable, str(grader)],
            cwd=cwd,
            env=environment,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return [], f"{grader}: no answer within {timeout:g} s"
    checks, problem = _checks(done.stdout)
    if problem:
        return [], f"{grader}: {problem}; stderr: {done.stderr[-DETAIL_SHOWN:]}"
    if done.returncode != 0:
        checks.append(
            {
                "name": "grader exit code",
                "passed": False,
                "detail": f"exit code {done.returncode}: {done.stderr[-DETAIL_SHOWN:]}",
            }
        )
    return checks, ""


def _checks(stdout: str) -> tuple[list[dict[str, Any]], str]:
    lines = [line for line in stdout.splitlines() if line.strip()]
    if not lines:
        return [], "printed nothing"
    try:
        data = json.loads(lines[-1])
        raw = data["checks"]
        checks = [
            {
                "name": str(check["name"]),
                "passed": check["passed"] is True,
                "detail": str(check.get("detail", ""))[:DETAIL_SHOWN],
            }
            for check in raw
        ]
    except (ValueError, KeyError, TypeError) as exc:
        return [], f'its last line is not {{"checks": [{{"name", "passed"}}…]}} ({exc})'
    return checks, ""


# --- what the grader reads --------------------------------------------------------------


def _inputs_write(trial: Trial) -> dict[str, str]:
    units = list(Unit.objects.filter(task=trial.task).order_by("attempt"))
    result = trial_result(trial, units)
    paths = {
        "SF_EVAL_WORKSPACE": trial.workspace(),
        "SF_EVAL_HIDDEN": trial.case_dir / "hidden",
        "SF_EVAL_TRACE": trial.folder / "trace.jsonl",
        "SF_EVAL_RESULT": trial.folder / "result.json",
        "SF_EVAL_ANSWER": trial.folder / "answer.json",
    }
    records: list[dict[str, Any]] = []
    for unit in units:
        exported = trace_export(unit_id=unit.pk, header={"unit": unit.attempt})
        records += exported if not records else exported[1:]
    paths["SF_EVAL_TRACE"].write_text("".join(json.dumps(r) + "\n" for r in records))
    paths["SF_EVAL_RESULT"].write_text(json.dumps(result, indent=2))
    paths["SF_EVAL_ANSWER"].write_text(json.dumps({"summary": result["summary"]}))
    return {key: str(path) for key, path in paths.items()}


def trial_result(trial: Trial, units: list[Unit]) -> dict[str, Any]:
    """The state a grader judges besides files: how the task and its last unit ended."""
    task, last = trial.task, units[-1] if units else None
    return {
        "task_status": task.status,
        "task_status_reason": task.status_reason,
        "unit_status": last.status if last else "",
        "verification_passed": last.verification_passed if last else None,
        "verification_output": last.verification_output if last else "",
        "summary": last.summary if last else "",
        "files_changed": _files_changed(trial),
        "skills_loaded": sorted(
            set(
                SkillUse.objects.filter(
                    unit__in=units, kind=SkillUseKind.LOAD, allowed=True
                ).values_list("skill__name", flat=True)
            )
        ),
        "cost": float(sum((unit.cost for unit in units), start=0)),
        "model": last.model if last else "",
    }


def _files_changed(trial: Trial) -> list[str]:
    """Paths that differ from the trial's first commit, committed or not."""
    workspace = trial.checkout()
    first = git("rev-list", "--max-parents=0", "HEAD", cwd=trial.repo).splitlines()[0]
    committed = git("diff", "--name-only", first, "HEAD", cwd=workspace, check=False)
    pending = git("status", "--porcelain", "--untracked-files=all", cwd=workspace, check=False)
    names = set(committed.splitlines())
    names |= {line[3:] for line in pending.splitlines() if len(line) > 3}
    return sorted(name for name in names if name)
