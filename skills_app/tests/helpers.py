"""Skill folders on disk, for tests and the benchmark's shape."""

from __future__ import annotations

from pathlib import Path

from skills_app.parsing import PROJECT_SKILLS


def write_skill(
    repo: Path,
    name: str,
    *,
    description: str = "Check the release notes",
    body: str = "# Steps\n\n1. Read `CHANGES.md`\n2. Check **every** entry\n",
    extra: str = "",
    files: dict[str, str] | None = None,
) -> Path:
    """``.agents/skills/<name>/SKILL.md`` under ``repo`` (and any supporting files)."""
    folder = repo / PROJECT_SKILLS / name
    folder.mkdir(parents=True, exist_ok=True)
    front = f"---\nname: {name}\ndescription: {description}\n{extra}---\n"
    (folder / "SKILL.md").write_text(front + body)
    for path, text in (files or {}).items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_text(text)
    return folder
