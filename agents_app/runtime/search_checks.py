"""Confirming what a walk of the worktree found, after the walk.

``sf_native``'s grep and glob walk by path: a directory the walk lists and then enters,
or a file it lists and then reads, is named again by its path, and a sandboxed process
running meanwhile (an MCP server runs code the agent wrote) can swap that directory for
a link to any folder of the host (``/etc``, another project's worktree) in between. The
walk then reads there with SF's rights (root). The walk's start is opened without a
link (``sf_core.beneath.walk_root``); what it found below is kept only if it is there
when reached again without a link: a matched line must be that very line of the file
read that way, so a line read through a link is never shown (whoever swapped the link
back would have to have put the same line in the worktree's file: it knew it already).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from sf_core.beneath import is_file_beneath, read_beneath


def confirmed_matches(top: Path, root: Path, matches: Iterable[Any]) -> list[Any]:
    """The grep matches (under ``root``, in the worktree ``top``) whose lines, context
    included, are the lines of their file as read without a link on the way."""
    files: dict[str, list[str] | None] = {}
    kept = []
    for match in matches:
        if match.path not in files:
            files[match.path] = _lines(top, root / match.path)
        lines = files[match.path]
        if lines is not None and _holds(lines, match):
            kept.append(match)
    return kept


def confirmed_files(top: Path, root: Path, paths: Iterable[str]) -> list[str]:
    """The glob results (relative to ``root``) that are files reached without a link."""
    return [path for path in paths if is_file_beneath(top, root / path)]


def _lines(top: Path, path: Path) -> list[str] | None:
    try:
        data = read_beneath(top, path, -1)
    except OSError:
        return None
    return data.decode("utf-8", errors="replace").split("\n")


def _holds(lines: list[str], match: Any) -> bool:
    """Each line grep showed is in the file's line of that number (grep may show a
    line shortened or without its ``\\r``, never another)."""
    first = match.line_number - len(match.before)
    shown = [*match.before, match.text, *match.after]
    found = lines[first - 1 : first - 1 + len(shown)] if first >= 1 else []
    if len(found) != len(shown):
        return False
    return all(text in line for text, line in zip(shown, found, strict=True))
