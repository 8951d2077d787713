"""``unified_diff`` and ``diff_stats`` against ``patch`` and ``diff -u``."""

from __future__ import annotations

import difflib
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sf_native

pytestmark = pytest.mark.skipif(shutil.which("patch") is None, reason="needs patch")

# Few distinct lines, so that diffs have moves, repeats and ambiguous alignments.
LINES = st.lists(
    st.sampled_from(["a", "b", "c", "d", "", "  indented", "x = 1", "tail"]), max_size=40
)


def text(lines: list[str], final_newline: bool) -> str:
    body = "\n".join(lines)
    return body + "\n" if lines and final_newline else body


def apply_patch(tmp: Path, old: str, diff: str) -> str:
    target = tmp / "file.txt"
    target.write_text(old)
    done = subprocess.run(
        ["patch", "--quiet", "--force", "--no-backup-if-mismatch", str(target)],
        input=diff,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr + "\n" + diff
    return target.read_text()


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    LINES,
    LINES,
    st.booleans(),
    st.booleans(),
    st.sampled_from(["myers", "patience"]),
    st.integers(0, 4),
)
def test_patch_applies_the_diff_and_reproduces_the_target(
    tmp_path: Path,
    old_lines: list[str],
    new_lines: list[str],
    old_newline: bool,
    new_newline: bool,
    algorithm: str,
    context: int,
) -> None:
    old, new = text(old_lines, old_newline), text(new_lines, new_newline)
    diff = sf_native.unified_diff(old, new, context=context, algorithm=algorithm)  # type: ignore[arg-type]
    if old == new:
        assert diff == ""
        return
    assert apply_patch(tmp_path, old, diff) == new
    stats = sf_native.diff_stats(old, new, context=context, algorithm=algorithm)  # type: ignore[arg-type]
    body = [line for line in diff.splitlines()[2:]]
    assert stats.insertions == sum(line.startswith("+") for line in body)
    assert stats.deletions == sum(line.startswith("-") for line in body)
    assert stats.hunks == sum(line.startswith("@@ ") for line in body)


def test_the_output_is_the_same_as_diff_u(tmp_path: Path) -> None:
    old = "".join(f"line {n}\n" for n in range(1, 60))
    new = old.replace("line 7\n", "line seven\n").replace("line 40\n", "") + "the end"
    (tmp_path / "old").write_text(old)
    (tmp_path / "new").write_text(new)
    expected = subprocess.run(
        ["diff", "-u", "--label", "a/greet.py", "--label", "b/greet.py", "old", "new"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    assert (
        sf_native.unified_diff(old, new, from_file="a/greet.py", to_file="b/greet.py") == expected
    )


def test_dates_follow_the_file_names_after_a_tab() -> None:
    diff = sf_native.unified_diff("a\n", "b\n", from_date="2026-11-23 05:00:00", to_date="now")
    assert diff.splitlines()[:2] == ["--- a\t2026-11-23 05:00:00", "+++ b\tnow"]


def test_it_agrees_with_difflib_on_what_changed() -> None:
    old = [f"row {n}\n" for n in range(10_000)]
    new = list(old)
    for n in range(0, 10_000, 97):
        new[n] = f"changed {n}\n"
    ours = sf_native.diff_stats("".join(old), "".join(new))
    theirs = list(difflib.unified_diff(old, new))
    assert ours.insertions == sum(line.startswith("+") for line in theirs[2:])
    assert ours.deletions == sum(line.startswith("-") for line in theirs[2:])
