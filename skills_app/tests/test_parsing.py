"""Reading a skill folder: every frontmatter field, and every way a folder is wrong
gets a message naming the file and the problem."""

from __future__ import annotations

from pathlib import Path

import pytest

from skills_app.parsing import (
    MAX_FILE_BYTES,
    MAX_SKILL_BYTES,
    SkillInvalid,
    folder_digest,
    skill_body,
    skill_folders,
    skill_parse,
    skill_read,
)

FULL = """---
name: release-notes
description: Use when writing the release notes.
user-invocable: false
model-invocable: true
side-effects: code-edits
permission-profile: trusted
---
# Release notes

Write them in CHANGES.md.
"""


def folder(tmp_path: Path, name: str = "release-notes", text: str = FULL) -> Path:
    path = tmp_path / name
    path.mkdir(parents=True, exist_ok=True)
    (path / "SKILL.md").write_text(text, encoding="utf-8")
    return path


def parse(path: Path):  # type: ignore[no-untyped-def]
    digest, raw = folder_digest(path)
    return skill_parse(path, digest=digest, raw=raw)


def test_every_frontmatter_field_is_read(tmp_path: Path) -> None:
    parsed = parse(folder(tmp_path))
    assert parsed.problem == ""
    meta = parsed.meta
    assert meta is not None
    assert (meta.name, meta.description) == ("release-notes", "Use when writing the release notes.")
    assert (meta.user_invocable, meta.model_invocable) == (False, True)
    assert (meta.side_effects, meta.permission_profile) == ("code-edits", "trusted")
    assert skill_body(parsed.path).startswith("# Release notes")


def test_defaults_are_the_safe_ones(tmp_path: Path) -> None:
    parsed = parse(folder(tmp_path, "x", "---\nname: x\ndescription: d\n---\nbody\n"))
    meta = parsed.meta
    assert meta is not None
    assert (meta.user_invocable, meta.model_invocable) == (True, True)
    assert (meta.side_effects, meta.permission_profile) == ("none", "restricted")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("no frontmatter\n", "must start with a --- frontmatter block"),
        ("---\nname: x\n", "not closed with ---"),
        ("---\nname: [x\n---\n", "invalid YAML frontmatter"),
        ("---\n- a\n- b\n---\n", "must be a mapping"),
        ("---\nname: x\n---\n", "description: Field required"),
        ("---\nname: x\ndescription: d\nowner: me\n---\n", "owner: Extra inputs"),
        ("---\nname: x\ndescription: d\nside-effects: explode\n---\n", "side-effects"),
        ("---\nname: x\ndescription: d\npermission-profile: root\n---\n", "permission-profile"),
        ("---\nname: x\ndescription: d\nuser-invocable: maybe\n---\n", "user-invocable"),
        ("---\nname: Bad_Name\ndescription: d\n---\n", "name: String should match"),
        ("---\nname: other\ndescription: d\n---\n", "must match its folder 'x'"),
    ],
)
def test_a_bad_skill_md_names_its_file_and_problem(tmp_path: Path, text: str, message: str) -> None:
    parsed = parse(folder(tmp_path, "x", text))
    assert parsed.meta is None
    assert message in parsed.problem
    assert str(tmp_path / "x" / "SKILL.md") in parsed.problem


def test_a_folder_without_skill_md_is_invalid(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    assert "has no SKILL.md" in parse(tmp_path / "empty").problem


def test_oversized_files_are_refused_not_truncated(tmp_path: Path) -> None:
    big = folder(tmp_path, "x", "---\nname: x\ndescription: d\n---\n" + "a" * MAX_SKILL_BYTES)
    assert f"more than the {MAX_SKILL_BYTES} allowed" in parse(big).problem
    ok = folder(tmp_path, "y", "---\nname: y\ndescription: d\n---\n")
    (ok / "checklists").mkdir()
    (ok / "checklists" / "huge.md").write_text("b" * (MAX_FILE_BYTES + 1))
    assert "huge.md" in parse(ok).problem
    assert f"more than the {MAX_FILE_BYTES} allowed" in parse(ok).problem


def test_not_utf8_is_invalid(tmp_path: Path) -> None:
    path = folder(tmp_path, "x")
    (path / "SKILL.md").write_bytes(b"---\nname: x\ndescription: \xff\xfe\n---\n")
    assert "not UTF-8" in parse(path).problem


def test_supporting_files_and_eval_cases_are_found(tmp_path: Path) -> None:
    path = folder(tmp_path)
    for name in ("scripts/check.sh", "schemas/in.json", "checklists/release.md", "mcp.json"):
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text("x")
    (path / "notes.txt").write_text("not a supporting file")
    case = path / "evals" / "first"
    (case / "hidden").mkdir(parents=True)
    (case / "task.md").write_text("Write the notes")
    (case / "grader.py").write_text("print('{}')")
    (path / "evals" / "broken").mkdir()
    parsed = parse(path)
    assert [name for name, _ in parsed.files] == [
        "mcp.json",
        "scripts/check.sh",
        "schemas/in.json",
        "checklists/release.md",
    ]
    first, broken = sorted(parsed.cases, key=lambda c: c.name != "first")
    assert (first.name, first.prompt, first.has_hidden, first.has_work) == (
        "first",
        "Write the notes",
        True,
        False,
    )
    assert first.problem == ""
    assert "has no task.md" in broken.problem


def test_the_digest_changes_with_content_and_with_any_file(tmp_path: Path) -> None:
    path = folder(tmp_path)
    first, _ = folder_digest(path)
    assert folder_digest(path)[0] == first
    (path / "SKILL.md").write_text(FULL.replace("CHANGES.md", "NEWS.md"))
    second, _ = folder_digest(path)
    assert second != first
    (path / "checklists").mkdir()
    (path / "checklists" / "a.md").write_text("x")
    assert folder_digest(path)[0] != second


def test_a_missing_body_file_raises_with_its_path(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        skill_body(tmp_path / "nope" / "SKILL.md")
    path = folder(tmp_path, "x", "plain text\n")
    with pytest.raises(SkillInvalid, match="frontmatter"):
        skill_body(path / "SKILL.md")


def test_no_link_in_a_skill_folder_is_followed(tmp_path: Path) -> None:
    """A repository an agent wrote could hold links to the host's files (SF reads
    skills with its own rights): each is refused, and its target never read."""
    secret = tmp_path / "host-secret"
    secret.write_text("DATABASE_URL=postgres://root@db/sf\n")
    skills = tmp_path / "skills"
    linked_body = skills / "linked-body"
    linked_body.mkdir(parents=True)
    (linked_body / "SKILL.md").symlink_to(secret)
    parsed = parse(linked_body)
    assert "a symbolic link" in parsed.problem
    assert parsed.meta is None
    with pytest.raises(OSError, match="symbolic links"):
        skill_body(linked_body / "SKILL.md")

    script = folder(skills, "linked-script", FULL.replace("release-notes", "linked-script"))
    (script / "scripts").mkdir()
    (script / "scripts" / "run.sh").symlink_to(secret)
    assert "scripts/run.sh: a symbolic link" in parse(script).problem
    with pytest.raises(OSError, match="symbolic links"):
        skill_read(script, script / "scripts" / "run.sh", 100)

    tree = folder(skills, "linked-dir", FULL.replace("release-notes", "linked-dir"))
    (tree / "checklists").symlink_to(tmp_path)
    assert "checklists: a symbolic link" in parse(tree).problem

    (skills / "linked-folder").symlink_to(tree)
    assert [p.name for p in skill_folders(skills)] == [
        "linked-body",
        "linked-dir",
        "linked-script",
    ]
