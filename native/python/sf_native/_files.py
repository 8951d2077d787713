"""Repository walking and searching: ``walk``, ``glob``, ``grep``, ``find_files``.

All of them walk the same way: regular files only, paths relative to ``root``
with ``/`` separators, sorted; ``.gitignore`` / ``.ignore`` / ``.git/info/exclude``
and the global git excludes honoured (``ignore_files=False`` turns that off);
hidden files skipped unless ``hidden=True``; ``.git`` never entered; symbolic
links skipped unless ``follow_links=True``. The walk runs on ``threads`` threads
(0: one per CPU) with the GIL released, and Ctrl-C interrupts it
(``KeyboardInterrupt``).

``include`` / ``exclude`` globs follow gitignore habits: a glob without ``/``
matches a file or directory name at any depth (``*.py``, ``node_modules``), a glob
with ``/`` matches the whole relative path (``src/**/*.rs``). ``exclude`` also
prunes whole directories.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Literal, NamedTuple

from sf_native import _core
from sf_native._core import GrepMatch

StrPath = str | os.PathLike[str]
Globs = str | Sequence[str]
Case = Literal["sensitive", "insensitive", "smart"]


def _globs(value: Globs) -> list[str]:
    """A single glob is a common slip for a list of one; accept both."""
    return [value] if isinstance(value, str) else list(value)


def walk(
    root: StrPath,
    *,
    include: Globs = (),
    exclude: Globs = (),
    hidden: bool = False,
    ignore_files: bool = True,
    max_depth: int | None = None,
    follow_links: bool = False,
    threads: int = 0,
) -> list[str]:
    """The files under ``root``, relative and sorted (see the module docstring).

    ``max_depth=1`` lists only ``root``'s own files. Raises ``FileNotFoundError``
    for a missing root, ``NotADirectoryError`` for a file, ``ValueError`` for a bad
    glob.
    """
    return _core.walk(
        root,
        _globs(include),
        _globs(exclude),
        hidden,
        ignore_files,
        max_depth,
        follow_links,
        threads,
    )


def glob(
    root: StrPath,
    pattern: str,
    *,
    exclude: Globs = (),
    hidden: bool = False,
    ignore_files: bool = True,
    max_depth: int | None = None,
    follow_links: bool = False,
    threads: int = 0,
) -> list[str]:
    """The files whose whole relative path matches ``pattern``, sorted.

    Like ``pathlib.Path.glob``: ``*`` stays within one directory (``*.py`` is the
    root's own Python files), ``**`` spans directories (``**/*.py`` is all of
    them). Ignore rules, hidden files and errors as for :func:`walk`.
    """
    return _core.glob(
        root,
        pattern,
        _globs(exclude),
        hidden,
        ignore_files,
        max_depth,
        follow_links,
        threads,
    )


def grep(
    root: StrPath,
    pattern: str,
    *,
    fixed: bool = False,
    case: Case = "sensitive",
    word: bool = False,
    context: int = 0,
    before: int | None = None,
    after: int | None = None,
    max_per_file: int | None = None,
    max_total: int | None = None,
    include: Globs = (),
    exclude: Globs = (),
    hidden: bool = False,
    ignore_files: bool = True,
    max_depth: int | None = None,
    follow_links: bool = False,
    threads: int = 0,
) -> list[GrepMatch]:
    """Lines matching ``pattern`` in the files of a :func:`walk` of ``root``.

    ``pattern`` is a Rust ``regex`` (close to Python's ``re`` without look-around
    or back-references), or a literal string with ``fixed=True``. A match never
    spans lines. ``case="smart"`` is insensitive unless the pattern has an upper-
    case letter; ``word=True`` keeps only whole-word matches.

    One :class:`GrepMatch` per matching line, in path order then line order, with
    up to ``before`` / ``after`` lines of context (both default to ``context``).
    ``max_per_file`` caps matching lines per file; ``max_total`` keeps the first
    ``max_total`` matching lines in that order (and stops searching once they are
    known). Binary files (a NUL byte anywhere) are skipped; invalid UTF-8 shows as
    U+FFFD. A bad pattern raises ``ValueError``.
    """
    return _core.grep(
        root,
        pattern,
        fixed,
        case,
        word,
        context if before is None else before,
        context if after is None else after,
        max_per_file,
        max_total,
        _globs(include),
        _globs(exclude),
        hidden,
        ignore_files,
        max_depth,
        follow_links,
        threads,
    )


class FileMatch(NamedTuple):
    """A :func:`find_files` result: the path, its score and the matched positions."""

    path: str
    score: int
    #: Character offsets in ``path`` that the query matched (for highlighting).
    positions: tuple[int, ...]


def find_files(
    root: StrPath,
    query: str,
    *,
    limit: int = 20,
    include: Globs = (),
    exclude: Globs = (),
    hidden: bool = False,
    ignore_files: bool = True,
    max_depth: int | None = None,
    follow_links: bool = False,
    threads: int = 0,
) -> list[FileMatch]:
    """The ``limit`` files of a :func:`walk` whose paths best match ``query``, best first.

    Fuzzy, fzf-style: ``"wkrs py"`` finds ``tasks_app/workers.py``. Space-separated
    terms must all match; ``'exact``, ``^prefix``, ``suffix$`` and ``!not`` terms
    work as in fzf; lower-case terms ignore case. Ties go to the shorter path, then
    to path order.
    """
    ranked = _core.find_files(
        root,
        query,
        limit,
        _globs(include),
        _globs(exclude),
        hidden,
        ignore_files,
        max_depth,
        follow_links,
        threads,
    )
    return [FileMatch(path, score, tuple(positions)) for path, score, positions in ranked]
