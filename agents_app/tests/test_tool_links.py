"""SF's file tools never follow a link swapped in after the path was checked.

A sandboxed process running while the agent's tool call runs (an MCP server started
from the worktree runs code the agent wrote) can swap a directory for a link between
``inside``'s check and the open. Each test plays that swap deterministically: the
check sees the directory, the open finds a link to a folder outside the worktree."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pytest

import sf_native
from agents_app.runtime import tools
from agents_app.runtime.tools import (
    EditFileInput,
    GlobInput,
    GrepInput,
    ListDirInput,
    ReadFileInput,
    ToolContext,
    ToolError,
    WriteFileInput,
)


@pytest.fixture
def swapped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A worktree whose ``d`` is checked as a directory and opened as a link to
    ``outside`` (the swap done right after ``inside`` resolved the path)."""
    worktree = tmp_path / "wt"
    (worktree / "d").mkdir(parents=True)
    (worktree / "d" / "f.txt").write_text("inside\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "f.txt").write_text("secret\n")
    checked = tools.inside

    def inside_then_swap(ctx: ToolContext, relative: str) -> Path:
        target = checked(ctx, relative)
        if not (worktree / "d").is_symlink():
            (worktree / "d" / "f.txt").rename(tmp_path / "moved.txt")
            (worktree / "d").rmdir()
            (worktree / "d").symlink_to(outside)
        return target

    monkeypatch.setattr(tools, "inside", inside_then_swap)
    return worktree, outside


def test_read_file_does_not_follow_a_swapped_link(swapped: tuple[Path, Path]) -> None:
    worktree, _ = swapped
    with pytest.raises(ToolError, match="a link on the way"):
        tools.read_file(ToolContext(worktree=worktree), ReadFileInput(path="d/f.txt"))


def test_write_file_does_not_follow_a_swapped_link(swapped: tuple[Path, Path]) -> None:
    worktree, outside = swapped
    ctx = ToolContext(worktree=worktree)
    with pytest.raises(ToolError, match="a link on the way"):
        tools.write_file(ctx, WriteFileInput(path="d/new.txt", content="planted\n"))
    with pytest.raises(ToolError, match="outside the worktree"):  # the link is seen now
        tools.write_file(ctx, WriteFileInput(path="d/f.txt", content="planted\n"))
    assert sorted(p.name for p in outside.iterdir()) == ["f.txt"]
    assert (outside / "f.txt").read_text() == "secret\n"


def test_edit_file_does_not_follow_a_swapped_link(swapped: tuple[Path, Path]) -> None:
    worktree, outside = swapped
    edit = EditFileInput(path="d/f.txt", search="secret", replace="planted")
    with pytest.raises(ToolError):
        tools.edit_file(ToolContext(worktree=worktree), edit)
    assert (outside / "f.txt").read_text() == "secret\n"


def test_the_tools_still_read_and_write_through_links_inside_the_worktree(
    tmp_path: Path,
) -> None:
    worktree = tmp_path / "wt"
    (worktree / "src").mkdir(parents=True)
    (worktree / "link").symlink_to("src")
    ctx = ToolContext(worktree=worktree)
    tools.write_file(ctx, WriteFileInput(path="link/new/a.txt", content="a\n"))
    assert (worktree / "src/new/a.txt").read_text() == "a\n"
    assert "a" in tools.read_file(ctx, ReadFileInput(path="link/new/a.txt"))


WALKS = {
    "grep": lambda ctx: tools.grep(ctx, GrepInput(pattern="secret", path="d")),
    "glob": lambda ctx: tools.glob(ctx, GlobInput(pattern="*", path="d")),
    "list_dir": lambda ctx: tools.list_dir(ctx, ListDirInput(path="d")),
}


@pytest.mark.parametrize("tool", sorted(WALKS))
def test_grep_glob_and_list_dir_do_not_follow_a_swapped_link(
    swapped: tuple[Path, Path], tool: str
) -> None:
    """The walk's start was named by its path: grep read, and glob and list_dir
    listed, the folder the link pointed to (as root: ``/etc``, another worktree)."""
    worktree, _ = swapped
    with pytest.raises(ToolError, match="a link on the way"):
        WALKS[tool](ToolContext(worktree=worktree))


def test_grep_and_glob_drop_what_a_walk_found_through_a_link(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Inside the walk, a directory listed then entered by its path: played by a walk
    that follows links while ``d`` is one, then ``d`` made a directory again."""
    worktree = tmp_path / "wt"
    (worktree / "d").mkdir(parents=True)
    (worktree / "d" / "f.txt").write_text("inside\nsecret? no\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "f.txt").write_text("secret: 4711\n")
    (outside / "shadow").write_text("secret: 4712\n")

    def raced(real: Any) -> Any:
        def walk(root: str, pattern: str, **options: Any) -> Any:
            (worktree / "d").rename(tmp_path / "held")
            (worktree / "d").symlink_to(outside)
            try:
                return real(root, pattern, **options, follow_links=True)
            finally:
                (worktree / "d").unlink()
                (tmp_path / "held").rename(worktree / "d")

        return walk

    monkeypatch.setattr(sf_native, "grep", raced(sf_native.grep))
    monkeypatch.setattr(sf_native, "glob", raced(sf_native.glob))
    ctx = ToolContext(worktree=worktree)
    assert tools.grep(ctx, GrepInput(pattern="secret")) == "no matches"
    assert tools.glob(ctx, GlobInput(pattern="**")) == "d/f.txt"


def test_a_fifo_in_the_worktree_is_refused_without_waiting(tmp_path: Path) -> None:
    """A command can ``mkfifo``: write_file on it held SF's worker in ``open`` until
    something opened the other end (forever, here)."""
    worktree = tmp_path / "wt"
    worktree.mkdir()
    os.mkfifo(worktree / "pipe")
    ctx = ToolContext(worktree=worktree)
    refused: list[str] = []

    def write() -> None:
        with pytest.raises(ToolError) as caught:
            tools.write_file(ctx, WriteFileInput(path="pipe", content="x\n"))
        refused.append(str(caught.value))

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    writer.join(timeout=10)
    assert refused, "write_file is still waiting on the FIFO"
