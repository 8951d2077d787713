"""Edits written outside a JSON string, in the formats the best harnesses accept.

A small model writes code badly inside a JSON string (every newline and quote escaped)
and well in a fenced block. So a call written as text may leave its code out and put it
in the answer after the call:

- ``write_file`` without ``content``, then a fenced block: the block is the content;
- ``edit_file`` without ``search``/``replace``, then one or more search/replace blocks
  (aider's "diff" format)::

      <<<<<<< SEARCH
      old lines
      =======
      new lines
      >>>>>>> REPLACE

An answer with search/replace blocks and no call at all is read as aider writes them:
each block's file is the line naming it before the block (or its fence). Every block
becomes one ``edit_file`` call, run in order: the blocks of one answer are independent
edits, as aider applies them, and each gets its own result.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

FENCED = re.compile(r"^[ \t]*```[^\n`]*\n(.*?)^[ \t]*```[ \t]*$", re.DOTALL | re.MULTILINE)
EDIT_BLOCK = re.compile(
    r"^[ \t]*<{5,9} ?SEARCH[^\n]*\n(.*?)^[ \t]*={5,9}[ \t]*\n(.*?)^[ \t]*>{5,9} ?REPLACE[^\n]*$",
    re.DOTALL | re.MULTILINE,
)
PATH_LINE = re.compile(r"^[\w./\\-]+\.[\w]+$|^[\w.-]+(?:/[\w.-]+)+$")


@dataclass(frozen=True)
class Edit:
    path: str
    search: str
    replace: str
    source: str  # the text it was read from


def after_call(name: str, arguments: Any, following: str) -> tuple[Any, str]:
    """``arguments`` completed from the text ``following`` the call, and the text that
    completed them: a fenced body for ``write_file`` without content, the first
    search/replace block for ``edit_file`` without search and replace. Unchanged (and
    ``""``) when there is nothing to complete."""
    if not isinstance(arguments, dict):
        return arguments, ""
    if name == "write_file" and "content" not in arguments:
        fenced = FENCED.search(following)
        if fenced and not EDIT_BLOCK.search(fenced.group(1)):
            return {**arguments, "content": fenced.group(1)}, fenced.group(0)
    if name == "edit_file" and "search" not in arguments and "replace" not in arguments:
        block = EDIT_BLOCK.search(following)
        if block:
            completed = {**arguments, "search": block.group(1), "replace": block.group(2)}
            return completed, block.group(0)
    return arguments, ""


def more_edits(name: str, arguments: Any, following: str) -> list[Edit]:
    """The search/replace blocks in ``following`` (the text after the block that
    completed an ``edit_file`` call, ``after_call``): the same file's further edits."""
    if name != "edit_file" or not isinstance(arguments, dict) or "path" not in arguments:
        return []
    blocks = EDIT_BLOCK.finditer(following)
    path = str(arguments["path"])
    return [Edit(path, b.group(1), b.group(2), b.group(0)) for b in blocks]


def edit_blocks(content: str) -> list[Edit]:
    """The search/replace blocks of an answer without a call, each with its file; empty
    when any block names no file (nothing is guessed)."""
    edits = []
    for block in EDIT_BLOCK.finditer(content):
        path = _path_before(content[: block.start()])
        if not path:
            return []
        edits.append(Edit(path, block.group(1), block.group(2), block.group(0)))
    return edits


def _path_before(text: str) -> str:
    """The file named on the last line before a block that is not a fence or blank."""
    for line in reversed(text.splitlines()):
        stripped = line.strip().strip("*`:").strip()
        if not stripped or line.strip().startswith("```"):
            continue
        stripped = re.sub(r"^(?:file|path)\s*:\s*", "", stripped, flags=re.IGNORECASE)
        return stripped if PATH_LINE.match(stripped) else ""
    return ""
