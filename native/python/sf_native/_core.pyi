"""Type stubs for the compiled module ``sf_native._core`` (built from ``native/src``).

Private: the public API, with defaults, is the ``sf_native`` package. Arguments
here are positional and all required; each function's docstring points at its
public wrapper.
"""

import os
from typing import Any, Final, final

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
    root: str | os.PathLike[str],
    include: list[str],
    exclude: list[str],
    hidden: bool,
    ignore_files: bool,
    max_depth: int | None,
    follow_links: bool,
    threads: int,
) -> list[str]:
    """Sorted relative paths of the files under ``root``; see ``sf_native.walk``."""

def glob(
    root: str | os.PathLike[str],
    pattern: str,
    exclude: list[str],
    hidden: bool,
    ignore_files: bool,
    max_depth: int | None,
    follow_links: bool,
    threads: int,
) -> list[str]:
    """Sorted relative paths matching ``pattern``; see ``sf_native.glob``."""

def grep(
    root: str | os.PathLike[str],
    pattern: str,
    fixed: bool,
    case: str,
    word: bool,
    before: int,
    after: int,
    max_per_file: int | None,
    max_total: int | None,
    include: list[str],
    exclude: list[str],
    hidden: bool,
    ignore_files: bool,
    max_depth: int | None,
    follow_links: bool,
    threads: int,
) -> list[GrepMatch]:
    """Matching lines in path then line order; see ``sf_native.grep``."""

def find_files(
    root: str | os.PathLike[str],
    query: str,
    limit: int,
    include: list[str],
    exclude: list[str],
    hidden: bool,
    ignore_files: bool,
    max_depth: int | None,
    follow_links: bool,
    threads: int,
) -> list[tuple[str, int, list[int]]]:
    """``(path, score, positions)`` best first; see ``sf_native.find_files``."""

def unified_diff(
    old: str,
    new: str,
    from_file: str,
    to_file: str,
    from_date: str | None,
    to_date: str | None,
    context: int,
    algorithm: str,
) -> str:
    """``diff -u`` text from ``old`` to ``new``; see ``sf_native.unified_diff``."""

def diff_stats(old: str, new: str, context: int, algorithm: str) -> tuple[int, int, int]:
    """``(insertions, deletions, hunks)``; see ``sf_native.diff_stats``."""

def apply_edit(
    text: str, search: str, replace: str, threshold: float
) -> tuple[str, str, int, int, float]:
    """``(text, how, start_line, end_line, similarity)``; see ``sf_native.apply_edit``."""

def redact(
    text: str, extra_rules: list[tuple[str, str]], gitleaks: bool = True
) -> tuple[str, list[tuple[str, int, int, str]]]:
    """``(redacted text, [(kind, start, end, rule id)])``; see ``sf_native.redact``."""
