"""The task set of ``harness_compare.py``: a template repository, an intent and a hidden
grader per task, and the smoke check that proves each grader without a model.

A task is a folder of ``benchmarks/harness_tasks``:

* ``repo/`` — the files of the repository's first commit (a fresh git repository is
  made from it for every run);
* ``intent.txt`` — what the harness is asked to do, as a person would write it;
* ``grade.py`` — the hidden grader, kept outside the repository: it runs with a copy of
  the final state as its working directory and exits 0 when the task is done;
* ``solution.patch`` — a reference solution, used only by ``--smoke``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

TASKS_DIR = Path(__file__).resolve().parent / "harness_tasks"
GIT = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.com"]
# What a harness leaves in a repository that is not part of its answer.
LITTER = shutil.ignore_patterns(".git", "__pycache__", ".pytest_cache", ".aider*")


@dataclass(frozen=True)
class Task:
    name: str
    folder: Path

    @property
    def intent(self) -> str:
        return (self.folder / "intent.txt").read_text().strip()

    @property
    def grader(self) -> Path:
        return self.folder / "grade.py"

    @property
    def solution(self) -> Path:
        return self.folder / "solution.patch"


def all_tasks() -> list[Task]:
    return [Task(p.parent.name, p.parent) for p in sorted(TASKS_DIR.glob("*/intent.txt"))]


def pick(names: str) -> list[Task]:
    """The tasks named (comma-separated), or every task for ``all``; unknown names refused."""
    known = {task.name: task for task in all_tasks()}
    if names == "all":
        return list(known.values())
    wanted = [n.strip() for n in names.split(",") if n.strip()]
    unknown = [n for n in wanted if n not in known]
    if unknown or not wanted:
        raise SystemExit(f"--tasks: unknown task(s) {unknown}; known: {', '.join(known)}")
    return [known[n] for n in wanted]


def git(repo: Path, *args: str) -> str:
    done = subprocess.run([*GIT, *args], cwd=repo, capture_output=True, text=True, check=True)
    return done.stdout


def make_repo(task: Task, folder: Path) -> Path:
    """A fresh git repository on ``main`` whose first commit is the task's template."""
    shutil.copytree(task.folder / "repo", folder)
    git(folder, "init", "-q", "-b", "main")
    git(folder, "config", "user.name", "bench")  # every harness can commit
    git(folder, "config", "user.email", "bench@example.com")
    git(folder, "add", "-A")
    git(folder, "commit", "-qm", "start")
    return folder


def final_state(repo: Path, into: Path, branch: str | None) -> Path:
    """A copy of what is graded: ``branch``'s tree (SF: the merged main), or else the
    working tree as the harness left it."""
    if branch is None:
        shutil.copytree(repo, into, ignore=LITTER)
        return into
    into.mkdir(parents=True)
    archive = subprocess.run([*GIT, "archive", branch], cwd=repo, capture_output=True, check=True)
    subprocess.run(["tar", "-x"], cwd=into, input=archive.stdout, check=True)
    return into


def last_change_s(repo: Path, branch: str | None) -> float | None:
    """Seconds from the repository's first commit (made just before the harness started)
    to the last change of what is graded: ``branch``'s last commit, or else the newest
    file of the working tree. None when nothing changed. A harness that is still busy
    after its last edit (a commit message, a last check) is not charged for it here."""
    times = git(repo, "log", "--format=%H %ct", branch or "HEAD").split()
    first, started = times[-2], float(times[-1])
    if branch is not None:
        return None if times[0] == first else float(times[1]) - started
    files = [p for p in repo.rglob("*") if p.is_file() and not _litter(p.relative_to(repo))]
    newest = max((p.stat().st_mtime for p in files), default=0.0)
    return round(newest - started, 1) if newest > started + 1 else None


def _litter(path: Path) -> bool:
    return any(
        p in {".git", "__pycache__", ".pytest_cache"} or p.startswith(".aider") for p in path.parts
    )


def grade(task: Task, state: Path) -> tuple[bool, str]:
    """Run the hidden grader on ``state`` (a copy it may litter): passed, and its output."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", "/tmp"),
        "PYTHONPATH": str(TASKS_DIR),  # the graders' shared helpers
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",  # the task's tests, not our venv's plugins
        "LANG": "C.UTF-8",
    }
    try:
        done = subprocess.run(
            [sys.executable, str(task.grader)],
            cwd=state,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
    except subprocess.TimeoutExpired:
        return False, "the grader timed out"
    return done.returncode == 0, (done.stdout + done.stderr).strip()[-1000:]


def smoke_one(task: Task) -> dict[str, object]:
    """The grader must fail on the initial repository and pass with the reference patch."""
    with tempfile.TemporaryDirectory(prefix=f"sf-smoke-{task.name}-") as folder:
        repo = make_repo(task, Path(folder) / "repo")
        before, why_before = grade(task, final_state(repo, Path(folder) / "before", "main"))
        git(repo, "apply", "--index", str(task.solution))
        git(repo, "commit", "-qm", "reference solution")
        after, why_after = grade(task, final_state(repo, Path(folder) / "after", "main"))
    proven = not before and after
    detail = "" if proven else f"before: {before} {why_before!r}; after: {after} {why_after!r}"
    return {"task": task.name, "proven": proven, "detail": detail}


def smoke(tasks: list[Task], workers: int = 2) -> list[dict[str, object]]:
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(smoke_one, tasks))
