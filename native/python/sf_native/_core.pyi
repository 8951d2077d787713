"""Type stubs for the compiled module ``sf_native._core`` (built from ``native/src``).

Private: import from the ``sf_native`` package. ``walk``, ``glob``, ``grep``,
``find_files``, ``unified_diff`` and the two record classes are re-exported there
as they are, so their signatures here (keyword-only arguments and defaults, as
``#[pyo3(signature = ...)]`` declares them in ``native/src/py``) are the public
ones; ``diff_stats``, ``apply_edit`` and ``redact`` have Python wrappers.
"""

import os
from collections.abc import Sequence
from typing import Any, Final, Literal, final

StrPath = str | os.PathLike[str]
#: One glob or a sequence of them.
Globs = str | Sequence[str]

__version__: str

#: Built-in secret kinds of ``redact``, in priority order: SF's own, then gitleaks' ids.
SECRET_KINDS: Final[tuple[str, ...]]
#: gitleaks rules left out of ``redact``, each with the reason.
GITLEAKS_DROPPED: Final[list[tuple[str, str]]]
#: gitleaks' licence and the rule data's provenance.
GITLEAKS_NOTICE: Final[str]
#: The default similarity threshold of ``apply_edit``.
DEFAULT_EDIT_THRESHOLD: Final[float]

class NativeError(Exception):
    """An error inside SF's native module that is not a type, value or path error."""

class EditNoMatch(ValueError, NativeError):
    """apply_edit found no place similar enough to the search text."""

class EditAmbiguous(ValueError, NativeError):
    """apply_edit found the search text in more than one place."""

@final
class GrepMatch:
    """One matching line of ``grep``, with its context lines.

    Frozen; equal when all fields are equal; unhashable.
    """

    @property
    def path(self) -> str:
        """The file, relative to the searched root, with ``/`` separators."""
    @property
    def line_number(self) -> int:
        """1-based line number."""
    @property
    def column(self) -> int:
        """1-based character column of the first match on the line."""
    @property
    def text(self) -> str:
        """The line without its line ending (invalid UTF-8 as U+FFFD)."""
    @property
    def before(self) -> tuple[str, ...]:
        """Up to ``before`` lines just above, in file order."""
    @property
    def after(self) -> tuple[str, ...]:
        """Up to ``after`` lines just below, in file order."""
    def __eq__(self, other: object) -> bool: ...
    __hash__: None  # type: ignore[assignment]

def canonical_json(obj: Any) -> str:
    """Canonical JSON text of a JSON-like value; see ``sf_native.canonical_json``."""

def canonical_hash(obj: Any) -> str:
    """Hex SHA-256 of the canonical JSON of ``obj``; see ``sf_native.canonical_hash``."""

def walk(
    root: StrPath,
    *,
    include: Globs | None = None,
    exclude: Globs | None = None,
    hidden: bool = False,
    ignore_files: bool = True,
    max_depth: int | None = None,
    follow_links: bool = False,
    threads: int = 0,
) -> list[str]:
    """The files under ``root``, relative and sorted (see the ``sf_native`` docstring).

    ``max_depth=1`` lists only ``root``'s own files. Raises ``FileNotFoundError``
    for a missing root, ``NotADirectoryError`` for a file, ``ValueError`` for a bad
    glob, ``TypeError`` for globs that are not ``str``.
    """

def glob(
    root: StrPath,
    pattern: str,
    *,
    exclude: Globs | None = None,
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

def grep(
    root: StrPath,
    pattern: str,
    *,
    fixed: bool = False,
    case: Literal["sensitive", "insensitive", "smart"] = "sensitive",
    word: bool = False,
    context: int = 0,
    before: int | None = None,
    after: int | None = None,
    max_per_file: int | None = None,
    max_total: int | None = None,
    include: Globs | None = None,
    exclude: Globs | None = None,
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

@final
class FileMatch:
    """A :func:`find_files` result. Frozen; equal when all fields are equal."""

    @property
    def path(self) -> str:
        """The file, relative to the searched root, with ``/`` separators."""
    @property
    def score(self) -> int:
        """Higher is better."""
    @property
    def positions(self) -> tuple[int, ...]:
        """Character offsets in ``path`` that the query matched (for highlighting)."""
    def __eq__(self, other: object) -> bool: ...
    __hash__: None  # type: ignore[assignment]

def find_files(
    root: StrPath,
    query: str,
    *,
    limit: int = 20,
    include: Globs | None = None,
    exclude: Globs | None = None,
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

def unified_diff(
    old: str,
    new: str,
    *,
    from_file: str = "a",
    to_file: str = "b",
    from_date: str | None = None,
    to_date: str | None = None,
    context: int = 3,
    algorithm: Literal["myers", "patience"] = "myers",
) -> str:
    """The diff from ``old`` to ``new`` in ``diff -u`` format ("" when they are equal).

    Headers are ``--- from_file`` / ``+++ to_file`` (each followed by a tab and the
    date when one is given), hunks ``@@ -start,len +start,len @@`` with ``context``
    unchanged lines around each change, and a last line without a newline is
    followed by ``\\ No newline at end of file``. ``patch`` applies the result.
    ``algorithm`` is ``"myers"`` (smallest diff) or ``"patience"``.
    """

def diff_stats(
    old: str, new: str, *, context: int = 3, algorithm: str = "myers"
) -> tuple[int, int, int]:
    """``(insertions, deletions, hunks)``; see ``sf_native.diff_stats``."""

def apply_edit(
    text: str, search: str, replace: str, *, threshold: float
) -> tuple[str, str, int, int, float]:
    """``(text, how, start_line, end_line, similarity)``; see ``sf_native.apply_edit``."""

def redact(
    text: str, extra_rules: list[tuple[str, str]] | None = None, *, gitleaks: bool = True
) -> tuple[str, list[tuple[str, int, int, str]]]:
    """``(redacted text, [(kind, start, end, rule id)])``; see ``sf_native.redact``."""
