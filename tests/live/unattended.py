"""How the live tests and ``benchmarks/live_model.py`` run a real model: the bounds a
team would set, unattended answers, and a tiny repository per run (one place for both)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

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
