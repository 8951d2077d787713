"""How the live tests and ``benchmarks/live_model.py`` run a real model: the bounds a
team would set, unattended answers, and a tiny repository per run (one place for both)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from tasks_app.engine.replaying import SAMPLE_REPO

# A small model that loses its way would otherwise go on for an hour a unit: these keep
# a run (up to 4 attempts of each task) inside a test's time, as a team would set them.
BOUNDS = {"SF_UNIT_MAX_STEPS": "15", "SF_UNIT_HARD_TIMEOUT": "150s"}
# Unattended: ask_user decides alone, every approval is rejected.
UNATTENDED = """\
ask_user:
  "*": "Nobody is here to answer: decide yourself and go on."
approvals:
  - tool: "*"
    decision: reject
"""


def answers_write(repo: Path) -> Path:
    """The unattended answers file for a run on ``repo`` (beside it, not in it)."""
    answers = repo.parent / f"{repo.name}-answers.yaml"
    answers.write_text(UNATTENDED)
    return answers


def repo_make(files: dict[str, str], folder: Path) -> Path:
    """A git repository on main whose first commit is ``files`` (or SAMPLE_REPO's when
    empty)."""
    if files:
        folder.mkdir(parents=True)
        for name, text in files.items():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_text(text)
    else:
        shutil.copytree(SAMPLE_REPO, folder)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@x"]
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "start"]):
        subprocess.run([*git, *args], cwd=folder, check=True)
    return folder


def units_record(run: Any, name: str) -> list[Path]:
    """``SF_LIVE_RECORD=DIR``: every unit of a headless run that asked the model, written
    to DIR as ``sf record`` writes it (``NAME-<unit>-<task>-<status>.jsonl``), to be
    replayed without the model (``sf replay``). Nothing without the variable, or when
    the run printed no result (the test's own checks say why)."""
    folder = os.environ.get("SF_LIVE_RECORD")
    if not folder:
        return []
    from sf_core.errors import SfError
    from tasks_app.models import Unit
    from tasks_app.recording import unit_record

    try:
        session = json.loads(run.stdout.strip().splitlines()[-1])["session"]
    except (IndexError, KeyError, TypeError, ValueError):
        return []
    Path(folder).mkdir(parents=True, exist_ok=True)
    written = []
    for unit in Unit.objects.filter(task__plan__session_id=session).select_related("task"):
        path = Path(folder) / f"{name}-{unit.pk}-{unit.task.key}-{unit.status}.jsonl"
        try:
            written.append(unit_record(unit_id=unit.pk, path=path))
        except SfError:  # no model step, or a replayed unit: nothing of the model's
            continue
    return written
