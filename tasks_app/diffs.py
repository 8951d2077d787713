"""A unit's checkpoint patch as files a reviewer can read: per file its status, its
+/- counts and its hunks, each line syntax-highlighted with Pygments.

The patch is ``git diff --binary`` output (``engine/worktrees.checkpoint_patch``), so
only one side of each change is at hand: counts come from the patch lines themselves.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer
from pygments.lexers import TextLexer, get_lexer_for_filename
from pygments.util import ClassNotFound

HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@(.*)$")
# Files this long (in patch lines) start collapsed; past the limit they are not
# highlighted at all, so one generated file cannot make the page slow.
COLLAPSE_AFTER = 300
HIGHLIGHT_LIMIT = 5000


@dataclass(frozen=True)
class DiffLine:
    kind: str  # add, del, ctx, hunk, note
    old_no: int | None
    new_no: int | None
    html: SafeString

    @property
    def sign(self) -> str:
        return {"add": "+", "del": "-", "ctx": " "}.get(self.kind, "")


@dataclass
class FileDiff:
    old_path: str
    new_path: str
    status: str = "modified"  # added, deleted, renamed, modified
    binary: bool = False
    added: int = 0
    removed: int = 0
    lines: list[DiffLine] = field(default_factory=list)

    @property
    def path(self) -> str:
        return self.old_path if self.status == "deleted" else self.new_path

    @property
    def collapsed(self) -> bool:
        return len(self.lines) > COLLAPSE_AFTER


@dataclass(frozen=True)
class _Raw:
    kind: str
    old_no: int | None
    new_no: int | None
    text: str


def diff_files(patch: str) -> list[FileDiff]:
    """Parse a git patch into files, highlighted for the unit page."""
    files = []
    for chunk in _file_chunks(patch):
        diff, raws = _parse_file(chunk)
        diff.lines = _highlighted(diff.path, raws)
        files.append(diff)
    return files


@functools.lru_cache(maxsize=64)
def diff_files_finished(patch: str) -> list[FileDiff]:
    """``diff_files`` of a finished unit's patch, which never changes again: parsed and
    highlighted (Pygments, most of the unit page's time for a large diff) once per
    process, not on every load. Read only: the page's template never changes it."""
    return diff_files(patch)


def diff_totals(files: list[FileDiff]) -> tuple[int, int]:
    return sum(f.added for f in files), sum(f.removed for f in files)


def _file_chunks(patch: str) -> list[list[str]]:
    chunks: list[list[str]] = []
    for line in patch.splitlines():
        if line.startswith("diff --git "):
            chunks.append([line])
        elif chunks:
            chunks[-1].append(line)
    return chunks


def _header_paths(first: str) -> tuple[str, str]:
    # "diff --git a/x b/x": ambiguous with spaces in names; ---/+++ lines override it.
    rest = first.removeprefix("diff --git ")
    old, _, new = rest.partition(" b/")
    return old.removeprefix("a/"), new or old.removeprefix("a/")


def _parse_file(chunk: list[str]) -> tuple[FileDiff, list[_Raw]]:
    diff = FileDiff(*_header_paths(chunk[0]))
    raws: list[_Raw] = []
    old_no = new_no = 0
    in_hunks = False
    for line in chunk[1:]:
        if in_hunks and not line.startswith("@@"):
            if diff.binary:
                continue
            old_no, new_no = _hunk_line(diff, raws, line, old_no, new_no)
            continue
        match = HUNK.match(line)
        if match:
            in_hunks = True
            old_no, new_no = int(match.group(1)), int(match.group(2))
            raws.append(_Raw("hunk", None, None, line))
        else:
            in_hunks = _header_line(diff, line)
    return diff, raws


def _header_line(diff: FileDiff, line: str) -> bool:
    """Read one header line; True when binary content follows (nothing to show)."""
    if line.startswith("new file mode"):
        diff.status = "added"
    elif line.startswith("deleted file mode"):
        diff.status = "deleted"
    elif line.startswith("rename from "):
        diff.status, diff.old_path = "renamed", line.removeprefix("rename from ")
    elif line.startswith("rename to "):
        diff.new_path = line.removeprefix("rename to ")
    elif line.startswith("--- a/"):
        diff.old_path = line.removeprefix("--- a/")
    elif line.startswith("+++ b/"):
        diff.new_path = line.removeprefix("+++ b/")
    elif line == "GIT binary patch" or line.startswith("Binary files "):
        diff.binary = True
        return True
    return False


def _hunk_line(
    diff: FileDiff, raws: list[_Raw], line: str, old_no: int, new_no: int
) -> tuple[int, int]:
    sign, text = line[:1], line[1:]
    if sign == "+":
        diff.added += 1
        raws.append(_Raw("add", None, new_no, text))
        return old_no, new_no + 1
    if sign == "-":
        diff.removed += 1
        raws.append(_Raw("del", old_no, None, text))
        return old_no + 1, new_no
    if sign == "\\":
        raws.append(_Raw("note", None, None, line))
        return old_no, new_no
    raws.append(_Raw("ctx", old_no, new_no, text))
    return old_no + 1, new_no + 1


def _lexer(path: str) -> Lexer:
    options = {"stripnl": False, "stripall": False, "ensurenl": True}
    try:
        return get_lexer_for_filename(path, **options)
    except ClassNotFound:
        return TextLexer(**options)


def _highlighted(path: str, raws: list[_Raw]) -> list[DiffLine]:
    code = [raw for raw in raws if raw.kind in ("add", "del", "ctx")]
    html_lines = _highlight_lines(path, [raw.text for raw in code])
    by_raw = dict(zip(map(id, code), html_lines, strict=True))
    return [
        DiffLine(raw.kind, raw.old_no, raw.new_no, by_raw.get(id(raw)) or escape(raw.text))
        for raw in raws
    ]


def _highlight_lines(path: str, texts: list[str]) -> list[SafeString]:
    """One highlighted HTML line per text line. The lines of a hunk are highlighted
    together (old and new sides mixed), which keeps most multi-line tokens right;
    Pygments closes its spans at each line end, so the output splits cleanly."""
    if not texts or len(texts) > HIGHLIGHT_LIMIT:
        return [escape(text) for text in texts]
    html = highlight("\n".join(texts) + "\n", _lexer(path), HtmlFormatter(nowrap=True))
    lines = html.split("\n")[: len(texts)]
    if len(lines) != len(texts):  # a lexer that ate or added lines: plain text is honest
        return [escape(text) for text in texts]
    return [mark_safe(line) for line in lines]  # Pygments escaped the code
