"""``walk``, ``glob``, ``grep`` and ``find_files`` on real trees, against git and ``re``."""

from __future__ import annotations

import os
import re
import subprocess
import threading
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sf_native


def write(root: Path, files: dict[str, str | bytes]) -> None:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)


TREE: dict[str, str | bytes] = {
    ".gitignore": "*.log\nbuild/\n!keep.log\n/top-only.txt\n",
    "README.md": "# demo\nTODO: write more\n",
    "src/app.py": "import os\n\ndef main():\n    # TODO: handle errors\n    return os.getcwd()\n",
    "src/util.py": "def helper(x):\n    return x * 2  # todo lower\n",
    "src/.gitignore": "generated_*.py\n",
    "src/generated_a.py": "TODO: ignored\n",
    "src/nested/deep/file.txt": "deep TODO here\n",
    "src/nested/top-only.txt": "not ignored: the pattern is anchored at the root\n",
    "top-only.txt": "ignored\n",
    "debug.log": "TODO ignored log\n",
    "keep.log": "TODO kept by negation\n",
    "build/out.txt": "TODO ignored build\n",
    "local/private.txt": "TODO excluded by info/exclude\n",
    ".hidden/config": "TODO hidden\n",
    ".env.example": "KEY=value\n",
    "image.bin": b"\x89PNG\x00\x01TODO\x00binary",
    "notes/unicode.txt": "caf\u00e9 TODO \u2603\nline two\n",
}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    write(root, TREE)
    (root / ".git" / "info" / "exclude").write_text("local/\n")
    subprocess.run(["git", "add", "README.md", "src/app.py"], cwd=root, check=True)
    return root


def git_files(root: Path) -> list[str]:
    listed = subprocess.run(
        ["git", "ls-files", "--others", "--cached", "--exclude-standard"],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return sorted(listed)


def test_walk_agrees_with_git_ls_files(repo: Path) -> None:
    assert sf_native.walk(repo, hidden=True) == git_files(repo)


def test_walk_options(repo: Path) -> None:
    visible = sf_native.walk(repo)
    assert ".env.example" not in visible
    assert ".hidden/config" not in visible
    assert "README.md" in visible
    assert sf_native.walk(repo, max_depth=1) == sorted(p for p in visible if "/" not in p)
    assert sf_native.walk(repo, include=["*.py"]) == ["src/app.py", "src/util.py"]
    assert "src/util.py" not in sf_native.walk(repo, exclude=["**/util.py"])
    everything = sf_native.walk(repo, ignore_files=False, hidden=True)
    assert {"debug.log", "build/out.txt", "local/private.txt"} <= set(everything)
    assert not any(p.startswith(".git/") for p in everything)
    assert sf_native.glob(repo, "src/**/*.txt") == [
        "src/nested/deep/file.txt",
        "src/nested/top-only.txt",
    ]


def test_a_dot_ignore_file_is_honoured(repo: Path) -> None:
    (repo / ".ignore").write_text("notes/\n")
    assert not any(p.startswith("notes/") for p in sf_native.walk(repo))


def python_grep(root: Path, files: list[str], pattern: str, flags: int = 0) -> set[tuple[str, int]]:
    regex = re.compile(pattern, flags)
    found = set()
    for name in files:
        data = (root / name).read_bytes()
        if b"\x00" in data:
            continue  # binary
        for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
            if regex.search(line):
                found.add((name, number))
    return found


@pytest.mark.parametrize(
    ("pattern", "case", "flags"),
    [
        ("TODO", "sensitive", 0),
        ("todo", "insensitive", re.IGNORECASE),
        (r"def \w+\(", "sensitive", 0),
        ("todo", "smart", re.IGNORECASE),
        ("TODO", "smart", 0),
    ],
)
def test_grep_finds_the_same_lines_as_python_re(
    repo: Path, pattern: str, case: str, flags: int
) -> None:
    ours = {(m.path, m.line_number) for m in sf_native.grep(repo, pattern, case=case)}  # type: ignore[arg-type]
    assert ours == python_grep(repo, sf_native.walk(repo), pattern, flags)
    assert ours  # the test means something


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.text(alphabet="TODOdoeis ()\\w.*+?", min_size=1, max_size=6))
def test_grep_agrees_with_re_on_generated_patterns(repo: Path, pattern: str) -> None:
    try:
        re.compile(pattern)
    except re.error:
        return
    try:
        ours = {(m.path, m.line_number) for m in sf_native.grep(repo, pattern)}
    except ValueError:
        return  # a pattern only one of the two dialects accepts
    assert ours == python_grep(repo, sf_native.walk(repo), pattern)


def test_grep_records_limits_context_and_fixed_strings(repo: Path) -> None:
    [match] = sf_native.grep(repo, "handle errors", context=1)
    assert (match.path, match.line_number, match.column) == ("src/app.py", 4, 13)
    assert match.text == "    # TODO: handle errors"
    assert (match.before, match.after) == (("def main():",), ("    return os.getcwd()",))
    assert len(sf_native.grep(repo, "TODO", max_total=2)) == 2
    per_file = sf_native.grep(repo, "o", max_per_file=1)
    assert len(per_file) == len({m.path for m in per_file})
    assert [m.path for m in sf_native.grep(repo, "x * 2", fixed=True)] == ["src/util.py"]
    assert sf_native.grep(repo, "x * 2") == []  # as a regex it means something else
    assert not [m for m in sf_native.grep(repo, "binary") if m.path == "image.bin"]
    assert [m.column for m in sf_native.grep(repo, "TODO", include=["notes/*"])] == [6]
    with pytest.raises(ValueError, match=r'bad pattern "\(oops"'):
        sf_native.grep(repo, "(oops")
    with pytest.raises(FileNotFoundError):
        sf_native.grep(repo / "missing", "x")


def test_find_files_ranks_the_obvious_match_first(repo: Path) -> None:
    ranked = sf_native.find_files(repo, "util")
    assert ranked[0].path == "src/util.py"
    assert [m.path for m in sf_native.find_files(repo, "nst dp fl")][:1] == [
        "src/nested/deep/file.txt"
    ]
    assert sf_native.find_files(repo, "zzzqqq") == []


def test_a_long_grep_releases_the_gil(tmp_path: Path) -> None:
    for n in range(300):
        (tmp_path / f"f{n}.txt").write_text("needle in a haystack\n" * 2_000)
    ticks = 0
    done = threading.Event()

    def count() -> None:
        nonlocal ticks
        while not done.is_set():
            ticks += 1
            time.sleep(0)

    counter = threading.Thread(target=count)
    counter.start()
    started = time.perf_counter()
    try:
        for _ in range(3):
            sf_native.grep(tmp_path, r"n\w+e", threads=1)
    finally:
        done.set()
        counter.join()
    elapsed = time.perf_counter() - started
    assert elapsed > 0.05, "the grep was too quick to tell"
    assert ticks > 100, f"the other thread ran only {ticks} times in {elapsed:.2f} s"


def test_walk_errors_are_pythons_own(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        sf_native.walk(tmp_path / "nope")
    (tmp_path / "file").write_text("x")
    with pytest.raises(NotADirectoryError):
        sf_native.walk(tmp_path / "file")
    with pytest.raises(ValueError, match='bad glob "\\[bad"'):
        sf_native.walk(tmp_path, include=["[bad"])
    assert os.path.isdir(tmp_path)


def test_arguments_after_the_root_and_pattern_are_keyword_only(repo: Path) -> None:
    """The compiled functions are the public ones: a flag passed by position is refused."""
    with pytest.raises(TypeError, match="positional"):
        sf_native.walk(repo, ["*.py"])  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="positional"):
        sf_native.grep(repo, "TODO", True)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="positional"):
        sf_native.find_files(repo, "util", 3)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="positional"):
        sf_native.unified_diff("a\n", "b\n", "old")  # type: ignore[call-arg]


def test_one_glob_is_a_list_of_one_and_other_values_are_refused(repo: Path) -> None:
    assert sf_native.walk(repo, include="*.py") == sf_native.walk(repo, include=["*.py"])
    assert sf_native.walk(repo, include=("*.py",)) == ["src/app.py", "src/util.py"]
    assert "README.md" not in sf_native.glob(repo, "*", exclude="*.md")
    with pytest.raises(
        TypeError, match=r"^include must be a glob or a sequence of globs \(str\), not list"
    ):
        sf_native.walk(repo, include=[1])  # type: ignore[list-item]
    with pytest.raises(TypeError, match=r"^exclude must be .*, not int"):
        sf_native.grep(repo, "TODO", exclude=3)  # type: ignore[arg-type]


def test_grep_context_sets_both_sides_unless_one_is_given(repo: Path) -> None:
    [both] = sf_native.grep(repo, "handle errors", context=1)
    [after_only] = sf_native.grep(repo, "handle errors", context=1, before=0)
    assert (both.before, both.after) == (("def main():",), ("    return os.getcwd()",))
    assert (after_only.before, after_only.after) == ((), both.after)
    with pytest.raises(ValueError, match="case must be 'sensitive', 'insensitive' or 'smart'"):
        sf_native.grep(repo, "x", case="loud")  # type: ignore[arg-type]


def test_find_files_records(repo: Path) -> None:
    [best, *_] = sf_native.find_files(repo, "util", limit=1)
    assert len(sf_native.find_files(repo, "s", limit=2)) == 2
    assert best.path == "src/util.py"
    assert best.score > 0
    assert best.positions == tuple(range(4, 8))  # "util" in "src/util.py"
    assert best == sf_native.find_files(repo, "util")[0]
    assert best != sf_native.find_files(repo, "app")[0]
    assert (
        repr(best) == f"FileMatch(path='src/util.py', score={best.score}, positions=(4, 5, 6, 7))"
    )
    with pytest.raises(TypeError, match="unhashable"):
        hash(best)
