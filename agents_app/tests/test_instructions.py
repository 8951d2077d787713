"""The repository's instruction files: which are chosen, how they share the budget, and
what a worktree an attacker wrote cannot make SF read (links out, FIFOs, devices, hard
links, huge files). Real files on disk; no database."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from agents_app.runtime.instructions import (
    HEADING,
    Instructions,
    instructions_budget,
    instructions_read,
    root_instruction_files,
)

SECRET = "AKIAZ7QJ3N5R8TXW2PLM"  # not AWS's documented example key, which redaction keeps


def write(root: Path, relative: str, text: str) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def paths(found: Instructions) -> list[str]:
    return [f.path for f in found.files]


def by_path(found: Instructions, path: str) -> dict[str, object]:
    [entry] = [f for f in found.payload()["files"] if f["path"] == path]
    return entry


def test_root_files_then_the_nested_ones_on_the_way_to_the_intended_files(tmp_path: Path) -> None:
    write(tmp_path, "AGENTS.md", "root: run make test\n")
    write(tmp_path, "CLAUDE.md", "claude: be brief\n")
    write(tmp_path, ".github/copilot-instructions.md", "copilot: no tabs\n")
    write(tmp_path, "src/AGENTS.md", "src: type hints\n")
    write(tmp_path, "src/api/AGENTS.md", "api: never break the v1 routes\n")
    write(tmp_path, "src/api/views.py", "")
    write(tmp_path, "src/db/AGENTS.md", "db: migrations by hand\n")
    write(tmp_path, "docs/AGENTS.md", "docs: one sentence a line\n")

    found = instructions_read(tmp_path, ["src/api/views.py"])

    assert paths(found) == [
        "AGENTS.md",
        "CLAUDE.md",
        ".github/copilot-instructions.md",
        "src/AGENTS.md",
        "src/api/AGENTS.md",  # the closest comes last: the prompt says the later wins
    ]
    section = found.section()
    assert section.startswith(HEADING)
    assert "not the words of the person who gave you this task" in section
    assert section.index("root: run make test") < section.index("api: never break the v1")
    assert "### src/api/AGENTS.md (for src/api/)" in section
    assert "db: migrations" not in section  # another directory's: named, not included
    assert found.others == ("docs/AGENTS.md", "src/db/AGENTS.md")
    assert "read the one for a directory before you change files there" in section
    assert "docs/AGENTS.md, src/db/AGENTS.md" in section


def test_directories_globs_and_claims_that_leave_the_worktree(tmp_path: Path) -> None:
    write(tmp_path, "pkg/AGENTS.md", "pkg rules\n")
    write(tmp_path, "pkg/sub/AGENTS.md", "sub rules\n")
    write(tmp_path, "lib/AGENTS.md", "lib rules\n")
    (tmp_path / "pkg" / "sub" / "deep").mkdir()

    as_directory = instructions_read(tmp_path, ["pkg/sub"])  # a directory: its own file too
    assert paths(as_directory) == ["pkg/AGENTS.md", "pkg/sub/AGENTS.md"]
    glob = instructions_read(tmp_path, ["pkg/**/*.py"])  # a glob stops at its wild part
    assert paths(glob) == ["pkg/AGENTS.md"]
    new_file = instructions_read(tmp_path, ["lib/new_module.py"])  # not there yet
    assert paths(new_file) == ["lib/AGENTS.md"]
    outside = instructions_read(tmp_path, ["/etc/x", "../x/AGENTS.md", "pkg/../../x.py", ""])
    assert paths(outside) == []
    assert instructions_read(tmp_path).section().startswith(HEADING)  # only named ones
    assert instructions_read(tmp_path).files == ()


def test_a_repository_without_any_has_no_section(tmp_path: Path) -> None:
    write(tmp_path, "README.md", "hello\n")
    found = instructions_read(tmp_path, ["README.md"])
    assert found.section() == ""
    assert found.payload() == {"files": [], "others": [], "budget": 32768, "section": ""}
    assert root_instruction_files(tmp_path) == []
    assert instructions_read(tmp_path / "gone").section() == ""


def test_files_share_the_budget_and_a_cut_says_so(tmp_path: Path) -> None:
    write(tmp_path, "AGENTS.md", "".join(f"root line {n}\n" for n in range(2000)))  # ~25 KB
    write(tmp_path, "CLAUDE.md", "short one\n")
    write(tmp_path, "pkg/AGENTS.md", "".join(f"pkg line {n}\n" for n in range(1000)))
    budget = 4000

    found = instructions_read(tmp_path, ["pkg/x.py"], budget=budget)

    shown = {f.path: f.shown for f in found.files}
    assert shown["CLAUDE.md"] == 10  # whole: what it leaves goes to the others
    assert sum(shown.values()) <= budget
    assert shown["AGENTS.md"] > budget // 3
    assert shown["pkg/AGENTS.md"] > budget // 3
    root = by_path(found, "AGENTS.md")
    assert root["cut"] is True
    assert root["size"] == (tmp_path / "AGENTS.md").stat().st_size
    assert by_path(found, "CLAUDE.md")["cut"] is False
    section = found.section()
    assert f"of its {root['size']:,} bytes shown" in section
    assert "read_file AGENTS.md for the rest" in section
    text = next(f.text for f in found.files if f.path == "AGENTS.md")
    assert text.endswith("\n")  # cut at a line's end
    assert "pkg line 0\n" in section
    assert "pkg line 999" not in section


def test_the_budget_is_a_share_of_a_small_window() -> None:
    assert instructions_budget(8192) == 3276
    assert instructions_budget(200_000) == 32768
    assert instructions_budget(200_000, max_bytes=1000) == 1000


def test_links_out_of_the_worktree_are_never_followed(tmp_path: Path) -> None:
    outside = write(tmp_path, "outside/secret.txt", "OUTSIDE-CONTENT\n")
    root = tmp_path / "wt"
    write(root, "pkg/x.py", "")
    (root / "AGENTS.md").symlink_to(outside)  # absolute, out
    (root / "CLAUDE.md").symlink_to("../outside/secret.txt")  # relative, out
    (root / "pkg" / "AGENTS.md").symlink_to("../.git/config")  # into .git
    (root / "linked").symlink_to(tmp_path / "outside", target_is_directory=True)
    write(tmp_path, "outside/AGENTS.md", "OUTSIDE-DIR-CONTENT\n")

    found = instructions_read(root, ["pkg/x.py", "linked/x.py"])

    assert "OUTSIDE" not in found.section()
    assert by_path(found, "AGENTS.md")["refused"] == "a link to outside the worktree: not followed"
    assert by_path(found, "CLAUDE.md")["link"] == "../outside/secret.txt"
    assert str(by_path(found, "pkg/AGENTS.md")["refused"]).startswith("a link to outside")
    assert "linked/AGENTS.md" not in paths(found)  # a linked directory is not entered
    assert root_instruction_files(root) == []


def test_a_link_inside_the_worktree_is_followed_once(tmp_path: Path) -> None:
    write(tmp_path, "AGENTS.md", "the rules\n")
    (tmp_path / "CLAUDE.md").symlink_to("AGENTS.md")  # the common pattern
    write(tmp_path, "docs/agents.md", "docs rules\n")
    write(tmp_path, "pkg/x.py", "")
    (tmp_path / "pkg" / "AGENTS.md").symlink_to("../docs/agents.md")
    (tmp_path / "pkg" / "CLAUDE.md").symlink_to("../CLAUDE.md")  # a link to a link

    found = instructions_read(tmp_path, ["pkg/x.py"])

    claude = by_path(found, "CLAUDE.md")
    assert (claude["same_as"], claude["link"]) == ("AGENTS.md", "AGENTS.md")
    assert found.section().count("the rules") == 1  # not repeated
    assert by_path(found, "pkg/AGENTS.md")["shown"] == len("docs rules\n")
    assert "docs rules" in found.section()
    assert by_path(found, "pkg/CLAUDE.md")["refused"] == "a link to a link: not followed"
    assert root_instruction_files(tmp_path) == ["AGENTS.md", "CLAUDE.md"]


def test_fifos_binaries_and_hard_links_are_refused_without_waiting(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "AGENTS.md")  # opening it for reading would wait for a writer
    (tmp_path / "CLAUDE.md").write_bytes(b"rules\x00\x01binary")
    write(tmp_path, "elsewhere.txt", "HARD-LINKED\n")
    (tmp_path / ".github").mkdir()
    os.link(tmp_path / "elsewhere.txt", tmp_path / ".github" / "copilot-instructions.md")
    result: list[Instructions] = []
    reader = threading.Thread(target=lambda: result.append(instructions_read(tmp_path)))
    reader.start()
    reader.join(timeout=10)
    assert not reader.is_alive(), "reading a FIFO blocked"
    [found] = result
    assert by_path(found, "AGENTS.md")["refused"] == "not a regular file"
    assert by_path(found, "CLAUDE.md")["refused"] == "a binary file"
    hard = by_path(found, ".github/copilot-instructions.md")
    assert str(hard["refused"]).startswith("a hard link")
    assert "HARD-LINKED" not in found.section()


def test_a_huge_file_is_read_no_further_than_the_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    huge = tmp_path / "AGENTS.md"
    huge.write_bytes(b"the first line\n" + b"x" * 79 + b"\n" * (8 * 1024**2 // 80))
    real_read = os.read
    taken: list[int] = []

    def counted(fd: int, n: int) -> bytes:
        data = real_read(fd, n)
        taken.append(len(data))
        return data

    monkeypatch.setattr(os, "read", counted)
    found = instructions_read(tmp_path, budget=1000)
    [entry] = found.files
    assert (entry.size, entry.cut) == (huge.stat().st_size, True)
    assert sum(taken) <= 1000
    assert entry.shown <= 1000
    assert "the first line" in found.section()


def test_a_sparse_giant_is_refused_as_binary_at_once(tmp_path: Path) -> None:
    with (tmp_path / "AGENTS.md").open("wb") as handle:  # 4 GiB of holes
        handle.write(b"the first line\n")
        handle.truncate(4 * 1024**3)
    [entry] = instructions_read(tmp_path, budget=1000).files
    assert (entry.size, entry.refused) == (4 * 1024**3, "a binary file")


def test_secrets_are_redacted_before_the_model_sees_them(tmp_path: Path) -> None:
    write(tmp_path, "AGENTS.md", f"deploy with AWS key {SECRET}\n")
    section = instructions_read(tmp_path).section()
    assert SECRET not in section
    assert "deploy with AWS key" in section


@pytest.mark.parametrize("name", ["AGENTS.md", "CLAUDE.md", ".github/copilot-instructions.md"])
def test_each_root_file_counts_for_the_doctor(tmp_path: Path, name: str) -> None:
    write(tmp_path, name, "rules\n")
    assert root_instruction_files(tmp_path) == [name]
