"""The checkpoint patch as files: status, +/- counts, line numbers, highlighting."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tasks_app.diffs import COLLAPSE_AFTER, FileDiff, diff_files, diff_totals


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    ).stdout


@pytest.fixture
def patch(tmp_path: Path) -> str:
    """A real ``git diff --binary``: one file added, modified, deleted, binary, renamed."""
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "app.py").write_text('def greet():\n    """Say hi."""\n    return "hi"\n')
    (repo / "old.txt").write_text("bye\nnow\n")
    (repo / "logo.bin").write_bytes(b"\x00\x01\x02")
    (repo / "name.md").write_text("# Title\n\nsame text\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "base")
    (repo / "app.py").write_text('def greet():\n    """Say hi."""\n    return "<b>hello</b>"\n')
    (repo / "old.txt").unlink()
    (repo / "new.py").write_text("import os\nprint(os.sep)\n")
    (repo / "logo.bin").write_bytes(b"\x00\x09\x08\x07")
    (repo / "name.md").rename(repo / "renamed.md")
    git(repo, "add", "--all")
    return git(repo, "diff", "--binary", "--cached", "-M")


def by_path(files: list[FileDiff]) -> dict[str, FileDiff]:
    return {f.path: f for f in files}


def test_each_file_has_its_status_and_counts(patch: str) -> None:
    files = by_path(diff_files(patch))
    assert {p: (f.status, f.binary, f.added, f.removed) for p, f in files.items()} == {
        "app.py": ("modified", False, 1, 1),
        "new.py": ("added", False, 2, 0),
        "old.txt": ("deleted", False, 0, 2),
        "logo.bin": ("modified", True, 0, 0),
        "renamed.md": ("renamed", False, 0, 0),
    }
    assert files["renamed.md"].old_path == "name.md"
    assert diff_totals(list(files.values())) == (3, 3)


def test_lines_carry_old_and_new_numbers(patch: str) -> None:
    lines = by_path(diff_files(patch))["app.py"].lines
    assert [(line.kind, line.old_no, line.new_no) for line in lines] == [
        ("hunk", None, None),
        ("ctx", 1, 1),
        ("ctx", 2, 2),
        ("del", 3, None),
        ("add", None, 3),
    ]
    assert [line.sign for line in lines[1:]] == [" ", " ", "-", "+"]


def test_code_is_highlighted_for_its_language_and_escaped(patch: str) -> None:
    files = by_path(diff_files(patch))
    added = files["app.py"].lines[-1].html
    assert '<span class="k">return</span>' in added
    assert "&lt;b&gt;hello&lt;/b&gt;" in added
    assert "<b>" not in added
    assert '<span class="sd">"""Say hi."""</span>' in files["app.py"].lines[2].html
    assert '<span class="kn">import</span>' in files["new.py"].lines[1].html
    assert [line.html for line in files["old.txt"].lines[1:]] == ["bye", "now"]


def test_a_binary_file_shows_no_lines(patch: str) -> None:
    assert by_path(diff_files(patch))["logo.bin"].lines == []


def test_git_without_binary_says_binary_files_differ() -> None:
    patch = (
        "diff --git a/img.png b/img.png\nnew file mode 100644\nindex 0000000..1111111\n"
        "Binary files /dev/null and b/img.png differ\n"
    )
    [image] = diff_files(patch)
    assert (image.path, image.status, image.binary, image.lines) == ("img.png", "added", True, [])


def test_a_long_file_starts_collapsed_and_an_empty_patch_has_no_files() -> None:
    body = "".join(f"+line {i}\n" for i in range(COLLAPSE_AFTER + 1))
    patch = f"diff --git a/big.txt b/big.txt\n--- a/big.txt\n+++ b/big.txt\n@@ -0,0 +1,{COLLAPSE_AFTER + 1} @@\n{body}"
    [big] = diff_files(patch)
    assert big.collapsed
    assert big.added == COLLAPSE_AFTER + 1
    assert diff_files("") == []
