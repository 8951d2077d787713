"""What the hidden graders share. A grader runs with the final state of a run as its
working directory (a throw-away copy); it prints what failed and exits 1, or exits 0."""

from __future__ import annotations

import functools
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

Result = tuple[bool, str]
TIMEOUT = 60  # seconds for any one check: a hung program fails the check
_failed: list[str] = []  # after the first failed check the others are skipped: the verdict
# is already known, and skipping keeps the smoke test cheap


def _check(function: Callable[..., Result]) -> Callable[..., Result]:
    @functools.wraps(function)
    def checked(*args: Any, **kwargs: Any) -> Result:
        if _failed:
            return False, f"{function.__name__}: skipped after a failed check"
        ok, detail = function(*args, **kwargs)
        if not ok:
            _failed.append(detail)
        return ok, detail

    return checked


def run(args: list[str], input: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    try:
        return subprocess.run(
            args, input=input, capture_output=True, text=True, timeout=TIMEOUT, env=env
        )
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(args, 124, "", f"timed out after {TIMEOUT} s")


@_check
def check_python(code: str) -> Result:
    done = run([sys.executable, "-c", code])
    return done.returncode == 0, f"python check: {done.stderr.strip()[-400:]}"


@_check
def pytest_passes() -> Result:
    done = run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider"])
    return done.returncode == 0, f"the project's tests: {done.stdout.strip()[-400:]}"


@_check
def unchanged(path: str) -> Result:
    """The file is as the task's template has it (a bug fix must not edit the test)."""
    template = Path(sys.argv[0]).resolve().parent / "repo" / path
    here = Path(path)
    same = here.is_file() and here.read_bytes() == template.read_bytes()
    return same, f"{path} was changed or removed"


@_check
def no_word(word: str) -> Result:
    pattern = re.compile(rf"\b{re.escape(word)}\b")
    left = [str(p) for p in Path().rglob("*.py") if pattern.search(p.read_text(errors="replace"))]
    return not left, f"{word} is still in {left}"


@_check
def ignored(*paths: str, yes: bool) -> Result:
    """Whether git ignores each of ``paths`` here (a repository is made if none is)."""
    if not Path(".git").exists():
        run(["git", "init", "-q"])
    wrong = [p for p in paths if (run(["git", "check-ignore", "-q", p]).returncode == 0) != yes]
    return not wrong, f"{'not ignored' if yes else 'ignored'}: {wrong}"


def finish(results: list[Result]) -> None:
    failed = [detail for ok, detail in results if not ok]
    for detail in failed:
        print(f"FAIL {detail}")
    sys.exit(1 if failed else 0)


@_check
def mentions(path: str, word: str) -> Result:
    """The file exists and names ``word`` (the task asked for tests of it there)."""
    here = Path(path)
    found = here.is_file() and word in here.read_text(errors="replace")
    return found, f"{path} does not mention {word}"
